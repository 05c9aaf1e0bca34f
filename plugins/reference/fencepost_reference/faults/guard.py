"""One guard per cluster for the faults that take a replica's data away (a wipe, file damage, a torn
write) and those that take a replica away (a contraction of a replica set).

With a replication factor of 3, a tablet survives losing one replica's data, not two. Each of those faults
used to check on its own that the cluster was whole before it struck, so when the default campaign's two
lanes ran two of them a second apart, both checks passed (the first damage was not visible yet: a node
whose WAL was just truncated still counted as a synced follower until it restarted and refused the tablet)
and together they destroyed a majority of one tablet's copies. The tablet then stayed leaderless for the
rest of the run, and the recovery checker rightly reported it (in the clean default campaign).

So every such fault takes its **turn** (:meth:`DamageGuard.turn`): one at a time, and only when

- no other damage is being done right now (another fault's turn is waited for within the turn's
  ``wait_s``, as the checks below are, without holding the guard meanwhile; after that the window is
  skipped, saying so);
- the last damage is at least ``VISIBLE_S`` old, long enough for the damaged node to have restarted and
  reported what it refuses to serve;
- the master reports every tablet whole and the last damaged node's old identities retired
  (:func:`unrepaired`), when the cluster runs a master;
- the operator reports every tablet steady, led, with a full ensemble of live members and no
  reconfiguration or migration in progress (a swap stalled in its prepare phase makes an election fence
  four nodes, three of which must answer: taking one of them away as well leaves the tablet leaderless,
  as a run of the clean default campaign showed);
- every tablet's leader reports a full, synced ensemble (:func:`healthy_tablets`), waiting up to the turn's
  ``wait_s`` for it.

A fault that removes a replica of one tablet (config-race, lagging-contract) leaves it fewer copies, so it
takes a :meth:`DamageGuard.contraction`: refused while another fault holds the guard (past its ``wait_s``)
and within ``VISIBLE_S`` of the last damage, and unless that tablet's leader reports a full, synced
ensemble (it may wait a few seconds for those two); it holds every damage off while it acts, and
afterwards the master's pending placement change (``up`` differs from ``acting``) holds them off until
the replica count is back. In a run of the clean default campaign on Docker, a config-race removed one of
a tablet's three replicas while the other lane's wipe, past its checks a moment earlier, erased a second:
the tablet kept two members, one of them wiped, and never had a leader again.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import Any

from fencepost import ClusterView
from fencepost_reference.info import cluster_info
from fencepost_reference.master import master_status
from fencepost_reference.settle import operator_status, unsettled
from system.admin import call
from system.wire import ConnectionLost, RpcError, Unreachable

VISIBLE_S = 10.0
"""How long after a damage the next one waits at least: a restarted node has refused what it must by then."""
POLL_S = 0.5


async def healthy_tablets(cluster: ClusterView) -> set[str]:
    """The tablets whose leader reports a full ensemble (the replication factor), every follower synced,
    and no catch-up member: each of their replicas holds the data, so one may be damaged."""
    info = cluster_info(cluster)
    rf = int(info.get("replication") or 3)
    healthy: set[str] = set()
    for host, port in info.get("nodes", {}).values():
        try:
            hello = await call(host, int(port), "hello", {}, timeout=2.0)
        except Exception:  # a node that is down leads nothing
            continue
        for t, rep in hello.get("tablets", {}).items():
            ensemble = set(rep.get("ensemble") or [])
            if (rep.get("status") == "leader" and len(ensemble) == rf and not rep.get("pre_voters")
                    and set(rep.get("followers") or []) >= ensemble - {hello.get("member")}):
                healthy.add(t)
    return healthy


def unrepaired(status: dict[str, Any], replacing: set[str]) -> str | None:
    """Why damaging a node now could destroy a majority of some tablet, or None when the master's ``status``
    shows every tablet whole and no acting set still holds a member of ``replacing`` (the last damaged
    node's old identities, which the master retires only when the node rejoins)."""
    members = status.get("members") or {}
    for m in sorted(replacing):
        if (members.get(m) or {}).get("state") != "left":
            return f"the last wiped node's old identity {m} has not been retired yet"
    for t, tab in sorted(status.get("tablets", {}).items()):
        acting = list(tab.get("acting") or [])
        if tab.get("status") != "steady" or tab.get("migration") or len(acting) < int(tab.get("rf") or 0):
            return (f"tablet {t} is not whole yet (status {tab.get('status')}, acting {acting}, rf {tab.get('rf')}, "
                    f"migration {tab.get('migration')})")
        up = tab.get("up")
        if up is not None and sorted(up) != sorted(acting):
            return f"tablet {t} has a placement change pending (up {sorted(up)}, acting {sorted(acting)})"
        gone = [m for m in acting if (members.get(m) or {}).get("state") != "normal"
                or not (members.get(m) or {}).get("alive")]
        if gone:
            return f"tablet {t} still has replicas on members {gone}, which are dead or retired"
    return None


def identities(members: dict[str, Any], node: str) -> set[str]:
    """The member ids of process ``node`` that have not left, in the master's ``members``: what a wipe or a
    reformat of it replaces, for :attr:`DamageGuard.replacing`."""
    return {m for m, rec in members.items() if rec.get("name") == node and rec.get("state") != "left"}


class DamageGuard:
    """The turn-taking of one cluster's data-destroying faults (see the module docstring)."""

    def __init__(self) -> None:
        self._lock = asyncio.Lock()
        self._last: float | None = None
        self._last_nodes: list[str] = []
        self.replacing: set[str] = set()
        """Member ids that the last wipe or reformat replaced, until the master retires them."""

    async def refusal(self, cluster: ClusterView) -> str | None:
        """Why no replica's data may be taken now, in words; None when it may."""
        if (recent := self._recent_damage()) is not None:
            return f"{recent}: another could destroy a majority of some tablet's copies"
        info = cluster_info(cluster)
        if info.get("master"):
            try:
                why = unrepaired(await master_status(cluster), self.replacing)
            except (TimeoutError, OSError, RpcError, ConnectionLost, Unreachable) as e:
                return f"the master did not answer ({type(e).__name__})"
            if why is not None:
                return why
        status = await operator_status(info["operators"])
        if status is None:
            return "no operator answered"
        unsteady = unsettled(status, int(info.get("replication") or 3), commits_agree=False)
        if unsteady:
            return unsteady[0]
        whole = int(info.get("tablets") or 0)
        healthy = await healthy_tablets(cluster)
        if len(healthy) < whole:
            return f"{whole - len(healthy)} tablet(s) lack a leader with a full, synced ensemble"
        return None

    @contextlib.asynccontextmanager
    async def turn(self, cluster: ClusterView, wait_s: float = 0.0, damage: bool = True) -> AsyncIterator[str | None]:
        """The guard for one fault: yields None when the fault may take a replica's data (and holds every
        other fault off until the body ends and ``VISIBLE_S`` more have passed), else why not; the body must
        then do nothing. Waits up to ``wait_s`` in all for another fault's turn to end and for the cluster to
        become whole. Without the wait for a turn, the default campaign's aimed windows (a lagging contract, a
        stalled swap) were often skipped because the other lane held the guard, and a seed whose plan holds
        one such window missed the bug it opens (``contract-below-commit``, once).

        A fault that takes no data but lowers what a tablet tolerates while it lasts (``damage`` False: a
        swap stalled on purpose makes elections fence four nodes) is held off while another fault takes data,
        and until the last damage is repaired, but not when no damage has happened in the run; it does not
        count as damage itself."""
        async def check() -> str | None:
            return await self.refusal(cluster) if damage or self._last is not None else None

        held, why = await self._take(check, wait_s)
        if not held:
            yield why
            return
        try:
            if why is None and damage:
                self._last_nodes = []
            try:
                yield why
            finally:
                if why is None and damage:
                    self._last = time.monotonic()
        finally:
            self._lock.release()

    @contextlib.asynccontextmanager
    async def contraction(self, cluster: ClusterView, tablet: str, wait_s: float = 0.0) -> AsyncIterator[str | None]:
        """The guard for a fault that removes a replica of ``tablet``: yields None when it may (and holds
        every data-taking fault off until the body ends), else why not; the body must then do nothing.

        Refused while another fault holds the guard, within ``VISIBLE_S`` of the last damage, and unless
        ``tablet``'s leader reports a full, synced ensemble: a replica taken then, or one whose damage is not
        visible yet, may be the second of three. Waits up to ``wait_s`` in all for another fault's turn to end
        and for the last two (not holding the guard while it waits for them: :meth:`_take`). The other tablets'
        state does not matter to it."""
        held, why = await self._take(lambda: self._uncontractable(cluster, str(tablet)), wait_s)
        try:
            yield why
        finally:
            if held:
                self._lock.release()

    async def _take(self, check: Callable[[], Awaitable[str | None]], wait_s: float) -> tuple[bool, str | None]:
        """Take the guard once ``check`` allows under it, waiting up to ``wait_s`` in all: (True, None) held
        and allowed; (True, why) held but ``check``'s last refusal when the time ran out; (False, why) not
        held, another fault's turn outlasting the wait.

        The wait for ``check`` is spent without the guard: it is taken, ``check`` asked once under it, and if
        that refuses while time is left, released again until ``check`` allows. Held during the wait, one
        fault waiting for the cluster to become whole (a wipe waits up to 30 s) kept every other one out:
        in the seeded bugs' runs, almost no ``config-race`` or ``stalled-swap`` window got a turn. What the
        guard promises is unchanged, since the check a fault acts on is always the one asked while holding
        it."""
        deadline = time.monotonic() + wait_s
        while True:
            if not await self._acquire(max(0.0, deadline - time.monotonic())):
                return False, self._busy()
            why = await check()
            if why is None or time.monotonic() >= deadline:
                return True, why
            self._lock.release()
            await _waited(check, deadline - time.monotonic())

    async def _acquire(self, wait_s: float) -> bool:
        """Take the guard, waiting up to ``wait_s`` for another fault's turn to end; whether it was taken."""
        if not self._lock.locked():
            await self._lock.acquire()
        elif wait_s <= 0:
            return False
        else:
            try:
                await asyncio.wait_for(self._lock.acquire(), wait_s)
            except TimeoutError:
                return False
        return True

    async def _uncontractable(self, cluster: ClusterView, tablet: str) -> str | None:
        """Why a replica of ``tablet`` may not be removed now (see :meth:`contraction`), or None."""
        if (why := self._recent_damage()) is not None:
            return why
        if tablet not in await healthy_tablets(cluster):
            return f"tablet {tablet} lacks a leader with a full, synced ensemble"
        return None

    def _recent_damage(self) -> str | None:
        """Why the last damage may not be visible yet (it is under ``VISIBLE_S`` old), or None."""
        if self._last is not None and (age := time.monotonic() - self._last) < VISIBLE_S:
            return f"the last damage ({', '.join(self._last_nodes)}, {age:.1f} s ago) may not be visible yet"
        return None

    def _busy(self) -> str:
        return (f"another fault is taking a replica's data ({', '.join(self._last_nodes) or 'starting'}) or "
                f"stalling a swap right now")

    def damaged(self, nodes: Iterable[str]) -> None:
        """Name the nodes the current turn takes data from (for the next refusals' words)."""
        self._last_nodes = sorted(nodes)


async def _waited(refusal: Callable[[], Awaitable[str | None]], wait_s: float) -> str | None:
    """Ask ``refusal`` every ``POLL_S`` until it allows (None) or ``wait_s`` have passed; its last answer."""
    deadline = time.monotonic() + wait_s
    while (why := await refusal()) is not None and time.monotonic() < deadline:
        await asyncio.sleep(POLL_S)
    return why


_GUARDS: weakref.WeakKeyDictionary[ClusterView, DamageGuard] = weakref.WeakKeyDictionary()


def guard_of(cluster: ClusterView) -> DamageGuard:
    """The cluster's one damage guard, shared by every fault package of its run."""
    guard = _GUARDS.get(cluster)
    if guard is None:
        guard = _GUARDS[cluster] = DamageGuard()
    return guard
