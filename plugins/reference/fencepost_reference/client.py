"""The harness's clients for the reference system: each maps an :class:`Invocation` to ``system.client`` calls.

:class:`ReferenceClient` serves the register and log workloads; :class:`SetClient` and
:class:`BankClient` express the set and bank workloads' operations with the system's lists and
compare-and-set.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from typing import Any

from fencepost import ClusterView, Invocation, Outcome
from system.client import Client as SystemClient


class ReferenceClient:
    """One worker's connection to the reference system; outcomes are the system client's ok/fail/info.

    Functions: read/get, write/put, cas ([expected, new]), delete, append, read-log.

    Each client has a home data node (as Jepsen binds each worker thread to a node): its first
    operations go there and are redirected to the leader, and a client reopened after an indeterminate
    result starts from its home again. A client bound to a worker (:meth:`bind`) has that worker's node
    as its home, every time it is reopened: a worker whose node still believes it leads, cut off from
    its followers but not from clients, comes back to it after each timeout and reads what it serves. An
    unbound client (the final reads) takes the next node in turn.
    """

    _homes = itertools.count()

    def __init__(self, operators: Callable[[ClusterView], list[tuple[str, int]]], timeout: float = 3.0) -> None:
        self._operators = operators
        self._timeout = timeout
        self._client: SystemClient | None = None
        self._worker: int | None = None

    def bind(self, worker: int) -> None:
        """Serve ``worker``: its home is node ``worker`` mod the number of data nodes."""
        self._worker = worker

    async def open(self, cluster: ClusterView) -> None:
        """Connect through the cluster's operators (for routing), starting from a home node."""
        nodes = cluster.nodes()
        turn = self._worker if self._worker is not None else next(ReferenceClient._homes)
        home = nodes[turn % len(nodes)] if nodes else None
        self._client = SystemClient(self._operators(cluster), timeout=self._timeout, home=home)

    async def invoke(self, op: Invocation) -> Outcome:
        """Run one op; the result value is what the history records on ok."""
        c = self._client
        if c is None:
            raise RuntimeError("client used before open()")
        key = str(op.key)
        value: Any
        if op.f in ("read", "get"):
            r = await c.get(key)
            value = r.value
        elif op.f in ("write", "put"):
            r = await c.put(key, op.value)
            value = op.value
        elif op.f == "cas":
            expected, new = op.value
            r = await c.cas(key, expected, new)
            value = op.value
        elif op.f == "delete":
            r = await c.delete(key)
            value = r.value
        elif op.f == "append":
            r = await c.append(key, op.value)
            value = {"element": op.value, "position": r.value}
        elif op.f == "read-log":
            r = await c.read(key)
            value = r.value
        else:
            raise ValueError(f"unknown function {op.f!r}")
        if r.type == "fail" and op.f == "cas" and r.error:
            return Outcome("fail", op.value, r.error)
        return Outcome(r.type, value if r.type == "ok" else None, r.error or None)

    async def close(self) -> None:
        """Close connections."""
        if self._client is not None:
            await self._client.close()
            self._client = None


class SetClient(ReferenceClient):
    """``add`` is an append; ``read`` reads the list as a set."""

    async def invoke(self, op: Invocation) -> Outcome:
        """Translate set ops to the log ops the system offers."""
        if op.f == "add":
            out = await super().invoke(Invocation("append", op.key, op.value))
            return Outcome(out.type, op.value if out.type == "ok" else None, out.error)
        if op.f == "read":
            out = await super().invoke(Invocation("read-log", op.key))
            return Outcome(out.type, sorted(out.value or [], key=repr) if out.type == "ok" else None, out.error)
        raise ValueError(f"unknown function {op.f!r}")


class BankClient(ReferenceClient):
    """``read`` returns the balances; ``transfer`` moves an amount by cas on the whole map, kept under one key
    (so in one tablet). Before the first transfer the key is absent: every account holds its initial balance."""

    def __init__(self, operators: Callable[[ClusterView], list[tuple[str, int]]], initial: Mapping[str, int],
                 timeout: float = 3.0) -> None:
        super().__init__(operators, timeout)
        self._initial = dict(initial)

    async def invoke(self, op: Invocation) -> Outcome:
        """Run a read or a transfer."""
        current = await super().invoke(Invocation("read", op.key))
        if current.type != "ok":
            return Outcome("fail" if current.type == "fail" else "info", None, current.error)
        balances: dict[str, int] | None = current.value
        seen = dict(balances) if balances is not None else dict(self._initial)
        if op.f == "read":
            return Outcome("ok", seen)
        if op.f != "transfer":
            raise ValueError(f"unknown function {op.f!r}")
        src, dst, amount = op.value["from"], op.value["to"], op.value["amount"]
        if seen[src] < amount:
            return Outcome("fail", None, "insufficient-funds")
        new = dict(seen)
        new[src] -= amount
        new[dst] += amount
        out = await super().invoke(Invocation("cas", op.key, [balances, new]))
        return Outcome(out.type, op.value if out.type == "ok" else None, out.error)
