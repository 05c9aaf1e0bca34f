"""An in-memory fake system with switchable misbehaviours, for fast tests of the runtime and of checkers.

:class:`FakeSystem` is a complete :class:`~harness.plugin_api.SystemPlugin` whose "cluster" is one
Python object, :class:`FakeStore`: a primary-backup key-value store of ``n`` nodes, run by
:class:`~harness.testing.memory.MemoryBackend`, which starts no process at all. Its clients implement
the register and set workloads, and transactions (the list-append and rw-register workloads) on a
multi-version store (:mod:`harness.testing.txn_store`). Faults act on the store: a killed or paused node
answers nothing, a node cut off from the primary cannot reach it, and killing the primary makes the next live
node primary. The correct store is linearizable, and strict serializable for transactions; its known-unsafe
modes (``--bug``) are the classic bugs:

- ``lost-write``: the primary acknowledges every ``LOST_EVERY``-th write without applying it;
- ``stale-read``: a node serves reads from its own copy, which lags the primary by ``STALE_LAG`` writes;
- ``snapshot-isolation``: transactions run under snapshot isolation instead of serializability, so write skew
  (G2-item) commits.

A whole test of it takes a fraction of a second per second of workload and needs no root, network or
disk, so the runtime, the workers, the nemesis runner and the checkers can be tested end to end in unit
tests. Like trio's fake clock and network, it is public API: a plugin's own tests may use it too.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from harness import capabilities as caps
from harness.plugin_api import NODE, Bug, Layout, ProcessSpec, Recipe
from harness.protocols import Invocation, Outcome
from harness.testing.memory import NodeStates
from harness.testing.txn_store import SERIALIZABLE, SNAPSHOT_ISOLATION, Conflict, TxnStore

if TYPE_CHECKING:
    from harness.checker_protocol import Checker
    from harness.cluster_view import ClusterView
    from harness.config import TestConfig
    from harness.protocols import Client, Nemesis, Workload

LOST_EVERY = 7
STALE_LAG = 3
LATENCY_S = 0.001
"""How long a fake operation takes: short, but each one yields to the event loop."""
TXN_WORKLOADS = ("list-append", "rw-register")
"""The workloads whose operations are transactions (``Invocation("txn", value=[micro-ops])``)."""


SI_SETTINGS: dict[str, Any] = {"rate": 0.0, "concurrency": 10, "recovery": 0.5}
"""The snapshot-isolation recipe's settings: back-to-back transactions from ten workers, so that they overlap."""


class Unavailable(Exception):
    """The node a client asked cannot be reached, or cannot reach the primary."""


class FakeStore:
    """The fake cluster's state: its nodes, who leads, and the data; who is down, paused or cut off is the
    backend's (:class:`~harness.testing.memory.NodeStates`).

    Args:
        nodes: the node names.
        states: what faults did to the nodes.
        bugs: the misbehaviours switched on (``lost-write``, ``stale-read``, ``snapshot-isolation``).
    """

    def __init__(self, nodes: list[str], states: NodeStates, bugs: frozenset[str] = frozenset()) -> None:
        self.nodes = list(nodes)
        self.bugs = bugs
        self.states = states
        self.primary = self.nodes[0]
        self.data: dict[Any, list[Any]] = {}
        """Each key's history of values, the current last (applied by the primary)."""
        self._writes = itertools.count(1)
        self.txns = TxnStore(SNAPSHOT_ISOLATION if "snapshot-isolation" in bugs else SERIALIZABLE)
        """The transactions' multi-version store (its own data: transactional keys are apart from these)."""

    def reach(self, node: str) -> None:
        """Return if ``node`` and, through it, the primary can be reached; else raise :class:`Unavailable`."""
        self._reachable(node)

    def _reachable(self, node: str) -> None:
        down, paused = self.states.down, self.states.paused
        if node in down or node in paused:
            raise Unavailable(f"{node} is {'down' if node in down else 'paused'}")
        if self.primary in down:  # the next live node takes over, with everything applied so far
            self.primary = next((n for n in self.nodes if n not in down), self.primary)
        if node != self.primary and frozenset((node, self.primary)) in self.states.cut:
            raise Unavailable(f"{node} cannot reach the primary {self.primary}")
        if self.primary in down or self.primary in paused:
            raise Unavailable(f"the primary {self.primary} is {'down' if self.primary in down else 'paused'}")

    def read(self, node: str, key: Any) -> Any:
        """The value at ``key`` as ``node`` serves it (None when absent)."""
        self._reachable(node)
        values = self.data.get(key, [])
        if "stale-read" in self.bugs and node != self.primary:
            values = values[:-STALE_LAG] if len(values) > STALE_LAG else values[:1]
        return values[-1] if values else None

    def write(self, node: str, key: Any, value: Any) -> None:
        """Write ``value`` at ``key`` through ``node`` and the primary."""
        self._reachable(node)
        if "lost-write" in self.bugs and next(self._writes) % LOST_EVERY == 0:
            return
        self.data.setdefault(key, []).append(value)

    def cas(self, node: str, key: Any, expected: Any, new: Any) -> bool:
        """Compare-and-set at ``key``; whether it applied."""
        self._reachable(node)
        values = self.data.get(key, [])
        if (values[-1] if values else None) != expected:
            return False
        self.data.setdefault(key, []).append(new)
        return True


class FakeClient:
    """A worker's connection to the fake store through its home node; outcomes are exact: a node that
    cannot be reached before the request is a definite fail, nothing here is ever half done."""

    _homes = itertools.count()

    def __init__(self, store: Callable[[], FakeStore], workload: str) -> None:
        self._store = store
        self._workload = workload
        self._home = ""

    async def open(self, cluster: ClusterView) -> None:
        """Pick the next home node."""
        nodes = cluster.nodes()
        self._home = nodes[next(FakeClient._homes) % len(nodes)]

    async def invoke(self, op: Invocation) -> Outcome:
        """Run a register op (read, write, cas) or a set op (add, read)."""
        await asyncio.sleep(LATENCY_S)
        store = self._store()
        try:
            if self._workload == "set":
                if op.f == "add":
                    current = store.read(self._home, op.key) or []
                    store.write(self._home, op.key, [*current, op.value])
                    return Outcome("ok", op.value)
                if op.f == "read":
                    return Outcome("ok", sorted(store.read(self._home, op.key) or [], key=repr))
            elif op.f == "read":
                return Outcome("ok", store.read(self._home, op.key))
            elif op.f == "write":
                store.write(self._home, op.key, op.value)
                return Outcome("ok", op.value)
            elif op.f == "cas":
                expected, new = op.value
                applied = store.cas(self._home, op.key, expected, new)
                return Outcome("ok" if applied else "fail", op.value, None if applied else "mismatch")
        except Unavailable as e:
            return Outcome("fail", None, str(e))
        raise ValueError(f"unknown function {op.f!r}")

    async def close(self) -> None:
        """Nothing to release."""


class FakeTxnClient:
    """A worker's transactional connection through its home node.

    Each micro-op is one round trip, so concurrent transactions interleave and contend. How an unreachable node
    ends a transaction, as a real client would report it: before the commit is sent, ``fail`` (aborted, nothing
    applied); while the commit is sent, ``info`` (the commit is lost, the client cannot tell); after it is
    applied, before the reply, ``info`` too (committed, the client cannot tell). A refused commit
    (:class:`~harness.testing.txn_store.Conflict`) is ``fail``.
    """

    def __init__(self, store: Callable[[], FakeStore], workload: str) -> None:
        self._store = store
        self._empty_list = workload == "list-append"
        self._home = ""

    async def open(self, cluster: ClusterView) -> None:
        """Pick the next home node."""
        nodes = cluster.nodes()
        self._home = nodes[next(FakeClient._homes) % len(nodes)]

    async def invoke(self, op: Invocation) -> Outcome:
        """Run a ``txn``: its micro-ops in order, then the commit; ``ok`` carries the completed micro-ops."""
        if op.f != "txn":
            raise ValueError(f"unknown function {op.f!r}: this workload's client runs txn")
        store = self._store()
        txn = store.txns.begin()
        done = []
        try:
            for micro_op in op.value:
                await asyncio.sleep(LATENCY_S)
                store.reach(self._home)
                done.append(txn.run(micro_op, [] if self._empty_list else None))
            await asyncio.sleep(LATENCY_S)
        except Unavailable as e:
            txn.abort()
            return Outcome("fail", op.value, str(e))
        try:
            store.reach(self._home)
        except Unavailable as e:
            txn.abort()
            return Outcome("info", None, f"commit lost: {e}")
        try:
            txn.commit()
        except Conflict as e:
            return Outcome("fail", op.value, f"serialization failure: {e}")
        await asyncio.sleep(LATENCY_S)
        try:
            store.reach(self._home)
        except Unavailable as e:
            return Outcome("info", None, f"committed, reply lost: {e}")
        return Outcome("ok", done)

    async def close(self) -> None:
        """Nothing to release."""


class FakeSystem:
    """The fake system's plugin (use it with :class:`~harness.testing.memory.MemoryBackend`)."""

    name = "fake"
    description = "an in-memory primary-backup store with switchable misbehaviours (Fencepost's testing tool)"
    workloads = ("register", "set", *TXN_WORKLOADS)
    capabilities = frozenset({caps.PROCESSES, caps.NETWORK, caps.PRIMARIES})

    def __init__(self) -> None:
        self.store: FakeStore | None = None

    def _store(self) -> FakeStore:
        if self.store is None:
            raise RuntimeError("the fake system has not been laid out")
        return self.store

    def processes(self, test: TestConfig, layout: Layout) -> list[ProcessSpec]:
        """One virtual process per node (the memory backend starts nothing)."""
        names = [f"n{i + 1}" for i in range(test.nodes)]
        self.store = FakeStore(names, getattr(layout, "states", None) or NodeStates(), frozenset(test.bug))
        return [ProcessSpec(n, NODE, (), layout.port(n), ready=False) for n in names]

    async def ready(self, cluster: ClusterView, timeout: float) -> None:
        """Ready at once."""

    def unavailable(self, backend: str) -> str | None:
        """Why the fake cannot run on ``backend``: it starts no process, so only the memory backend runs it."""
        return None if backend == "memory" else "the fake system runs only on the memory backend (--backend memory)"

    def client(self, workload: Workload, cluster: ClusterView) -> Client:
        """A client for ``workload``: a transactional one for list-append and rw-register."""
        if workload.name in TXN_WORKLOADS:
            return FakeTxnClient(self._store, workload.name)
        return FakeClient(self._store, workload.name)

    def checkers(self, test: TestConfig) -> list[Checker]:
        """None of its own."""
        return []

    def faults(self) -> Mapping[str, Callable[[], Nemesis]]:
        """None of its own: the generic kill, pause and partition faults apply."""
        return {}

    def bugs(self) -> Mapping[str, Bug]:
        """``lost-write`` and ``stale-read``, each caught by the linearizability checker, and
        ``snapshot-isolation``, caught by the transactional checker as G2-item (checked strict-serializable)."""
        return {
            "lost-write": Bug("lost-write", "the primary acknowledges some writes without applying them",
                              Recipe("register", (), 5.0, why="reads after an acknowledged write miss it")),
            "stale-read": Bug("stale-read", "nodes serve reads from a copy that lags the primary",
                              Recipe("register", (), 5.0, why="reads return values older than acknowledged writes")),
            "snapshot-isolation": Bug(
                "snapshot-isolation", "transactions run under snapshot isolation, not serializability: write skew "
                "(G2-item) commits",
                Recipe("list-append", (), 5.0, settings=SI_SETTINGS,
                       why="concurrent transactions that each read a key the other appends to both commit; the "
                           "txn checker finds the rw-cycle (G2-item) under strict-serializable")),
        }

    async def primaries(self, cluster: ClusterView) -> list[str]:
        """The primary."""
        return [self._store().primary]
