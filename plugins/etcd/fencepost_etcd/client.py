"""The etcd plugin's clients: the register, set and lock workloads' operations on etcd's v3 API.

Each client is bound to a home member and talks only to it. A client told which worker it serves
(:meth:`EtcdClient.bind`, as the harness does for every worker) has that worker's member, node ``worker`` mod
the number of nodes, every time it is opened, as a Jepsen worker keeps its node when it reopens its client.
An unbound client (the final reads) that opens after another closed in the same cluster takes the member
that one left; other unbound clients take the next member in turn. Values are JSON text. Outcomes follow
:mod:`fencepost_etcd.gateway`: a definite error is ``fail``, an indefinite one ``info``, and a failed read is
always ``fail`` (a read changes nothing).

- register: ``read`` is a linearizable range (a serializable one with ``--bug serializable-reads``),
  ``write`` a put, ``cas`` a transaction that compares the value and then puts.
- set: ``add`` puts ``<set>/<element>``; ``read`` ranges over the set's prefix.
- lock (Jepsen's lock-set): ``add`` grants a lease, takes etcd's lock on it, reads the shared set, writes it
  back with the element added (an unguarded read-modify-write), unlocks and revokes; ``read`` reads the
  set. If two clients ever hold the lock at once, one's write overwrites the other's: a lost add. Each
  acknowledged add records the mod revision of the set it read (``read_revision``): two holders that read
  the same revision held the lock at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import weakref
from typing import Any, ClassVar

from fencepost import ClusterView, Invocation, Outcome
from fencepost_etcd.gateway import Definite, Gateway, Indefinite

LOCK_NAME = "fencepost-lock"
LOCK_TTL_S = 2
"""The lock lease's time to live: a holder paused longer than this loses the lock without knowing."""


class EtcdClient:
    """One worker's client for ``workload`` against its home member.

    Args:
        workload: register, set or lock.
        serializable: serve reads from the member's own state (the serializable-reads mode).
        timeout: seconds for each request.
    """

    _homes = itertools.count()
    _vacated: ClassVar[weakref.WeakKeyDictionary[ClusterView, list[str]]] = weakref.WeakKeyDictionary()
    """Per cluster, the members that closed clients left, the last closed last."""

    def __init__(self, workload: str, *, serializable: bool = False, timeout: float = 4.0) -> None:
        self.workload = workload
        self.serializable = serializable
        self.timeout = timeout
        self.gateway: Gateway | None = None
        self.home: str | None = None
        self._cluster: ClusterView | None = None
        self._worker: int | None = None

    def bind(self, worker: int) -> None:
        """Serve ``worker``: its home is node ``worker`` mod the number of nodes, at every opening."""
        self._worker = worker

    async def open(self, cluster: ClusterView) -> None:
        """Open on the bound worker's member; unbound, on the member the last unbound client closed in this
        cluster left, if it is still a member, else on the next member in turn."""
        nodes = cluster.nodes()
        if self._worker is not None:
            home: str | None = nodes[self._worker % len(nodes)]
        else:
            vacated = EtcdClient._vacated.setdefault(cluster, [])
            home = vacated.pop() if vacated else None
            if home not in nodes:
                home = nodes[next(EtcdClient._homes) % len(nodes)]
        assert home is not None
        host, port = cluster.address(home)
        self.home, self._cluster = home, cluster
        self.gateway = Gateway(f"http://{host}:{port}", self.timeout)

    async def close(self) -> None:
        """Close the connections; an unbound client leaves its home member to the next unbound client opened."""
        if self.gateway is not None:
            await self.gateway.close()
            self.gateway = None
        if self._cluster is not None and self.home is not None and self._worker is None:
            EtcdClient._vacated.setdefault(self._cluster, []).append(self.home)
        self._cluster = None

    async def invoke(self, op: Invocation) -> Outcome:
        """Run one operation; its exact outcome."""
        assert self.gateway is not None, "client used before open()"
        try:
            return await self._run(self.gateway, op)
        except Definite as e:
            return Outcome("fail", None, str(e))
        except Indefinite as e:
            return Outcome("fail" if op.f == "read" else "info", None, str(e))

    async def _run(self, g: Gateway, op: Invocation) -> Outcome:
        key = str(op.key)
        if self.workload == "register":
            if op.f == "read":
                value, _ = await g.get(key, serializable=self.serializable)
                return Outcome("ok", None if value is None else json.loads(value))
            if op.f == "write":
                await g.put(key, json.dumps(op.value))
                return Outcome("ok", op.value)
            if op.f == "cas":
                expected, new = op.value
                done = await g.cas(key, None if expected is None else json.dumps(expected), json.dumps(new))
                return Outcome("ok" if done else "fail", op.value, None if done else "compare failed")
        elif self.workload == "set":
            if op.f == "add":
                await g.put(f"{key}/{json.dumps(op.value)}", "")
                return Outcome("ok", op.value)
            if op.f == "read":
                found = await g.get_prefix(f"{key}/", serializable=self.serializable)
                return Outcome("ok", sorted((json.loads(k[len(key) + 1:]) for k in found), key=repr))
        elif self.workload == "lock":
            if op.f == "add":
                return await self._add_under_lock(g, key, op.value)
            if op.f == "read":
                value, _ = await g.get(key, serializable=self.serializable)
                return Outcome("ok", sorted(json.loads(value) if value else [], key=repr))
        raise ValueError(f"unknown function {op.f!r} for the {self.workload} workload")

    async def _add_under_lock(self, g: Gateway, key: str, element: Any) -> Outcome:
        """Lock, read the set, write it back with ``element``, unlock. Once the write was sent, the outcome
        is the write's; a failure before it is a definite fail (nothing was written)."""
        try:  # nothing is written before the put: a failure up to there is definite
            lease = await g.grant(LOCK_TTL_S)
        except (Definite, Indefinite) as e:
            raise Definite(f"no lease: {e}") from None
        keeper = asyncio.create_task(self._keep_alive(g, lease))
        try:
            try:
                lock = await g.lock(LOCK_NAME, lease)
                value, revision = await g.get(key)
            except (Definite, Indefinite) as e:
                raise Definite(f"before the write: {e}") from None
            members = json.loads(value) if value else []
            await g.put(key, json.dumps([*members, element]))  # unguarded: etcd's lock is advisory
            with contextlib.suppress(Definite, Indefinite):  # the lease's expiry releases the lock anyway
                await g.unlock(lock)
        finally:
            keeper.cancel()
            with contextlib.suppress(Definite, Indefinite, asyncio.CancelledError):
                await g.revoke(lease)
        return Outcome("ok", element, extra={"read_revision": revision})

    @staticmethod
    async def _keep_alive(g: Gateway, lease: str) -> None:
        """Renew ``lease`` every third of its time to live, for as long as the lock is wanted or held; a
        renewal that cannot get through lets the lease, and so the lock, expire."""
        while True:
            await asyncio.sleep(LOCK_TTL_S / 3)
            with contextlib.suppress(Definite, Indefinite):
                await g.keep_alive(lease)
