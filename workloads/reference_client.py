"""The harness's client for the reference system: maps an :class:`Invocation` to a ``system.client`` call."""

from __future__ import annotations

import itertools
from typing import Any

from harness.protocols import Backend, Invocation, Outcome
from system.client import Client as SystemClient


class ReferenceClient:
    """One worker's connection to the reference system; outcomes are the system client's ok/fail/info.

    Functions: read/get, write/put, cas ([expected, new]), delete, append, read-log.

    Each client opened gets the next data node as its home, in turn (as Jepsen binds each client
    process to a node): its first operations go there and are redirected to the leader, and a client
    reopened after an indeterminate result starts from a home again.
    """

    _homes = itertools.count()

    def __init__(self, timeout: float = 3.0) -> None:
        self._timeout = timeout
        self._client: SystemClient | None = None

    async def open(self, backend: Backend) -> None:
        """Connect through the cluster's operators (for routing), starting from a home node."""
        nodes = backend.nodes()
        home = nodes[next(ReferenceClient._homes) % len(nodes)] if nodes else None
        self._client = SystemClient(list(backend.cluster_info()["operators"]), timeout=self._timeout, home=home)

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
