"""Catch-up partition fault: cut a tablet's voters off while a new replica catches up (Kudu PRE_VOTER).

A replica that joins a tablet first streams as a catch-up member (PRE_VOTER): the leader sends it every
entry, but its acknowledgements must not count toward the commit majority until a reconfiguration makes
it a voter. This fault opens the window where that rule matters:

1. add a replica of one tablet on a node that does not hold it (``add_replica`` through the master);
2. wait until the migration reaches ``promote`` (the copy is done), then until the tablet's leader *at
   that moment* reports the new replica's stream synced and every other voter among its followers (at most
   ``SYNC_WAIT_S``, or the try ends uncut): only a synced catch-up member's acknowledgements can count, and
   only live voters can elect another leader;
3. partition that leader and the new replica from the tablet's other voters and from the operators, and
   hold it until the operators have elected a new leader among those voters (at most 15 s), then
   ``DEPOSED_HOLD_S`` more;
4. check that the cut-off leader still leads at the epoch it had at the cut.

A try that cut nothing, elected no new leader, or whose leader another window killed, paused or restarted
during the cut, could not lose anything the leader acknowledged: the window heals, puts the count back and
tries again, up to ``ROUNDS`` tries, the last one starting within ``NEXT_ROUND_BEFORE_S`` of the window's
start. The result is the last try, with ``exposed`` (whether it was spoiled none of these ways) and the
earlier tries' summaries under ``rounds``.

The window first waits (at most ``SETTLE_WAIT_S``) for a settled tablet with a spare live node, and holds
the tablet's raised replica count (:func:`~fencepost_reference.master.held_counts`) until it ends, so
that another window's end does not put the count back and cancel the migration.

The leader can now reach only a non-voter. A correct leader commits nothing (its writes time out), and
the operators elect a new leader among the cut-off voters. A leader that counts the catch-up member
acknowledges writes that no voter majority holds; the new leader never had them, so the linearizability
and amnesia checkers see acknowledged writes vanish. The window's end heals the network and puts the
replica count back. It needs a node outside the tablet's up set (run with ``--nodes 4`` or more), and
prefers tablets with three or more voters: with two, the leader and the catch-up member are a majority of
the ensemble, but the lone voter left outside can never be elected, so nothing is lost.

In a default campaign run that missed ``count-pre-voter-acks``, one window cut a leader that had been
replaced while the copy ran (it had read the leader before the migration), one chose a two-voter tablet,
and one cut the new replica before the leader's stream to it had synced.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import Sequence
from typing import Any

from fencepost import CONTROL, NETWORK, ClusterView, FaultSpec, complete_grudge, poll_until
from fencepost_reference.info import replica_summary
from fencepost_reference.master import (
    admin,
    held_counts,
    master_status,
    restore_replica_counts,
    settled_with_spare,
)
from system.wire import RpcError

TARGETS = ("cut-voters",)
PROMOTE_WAIT_S = 20.0
ELECTION_WAIT_S = 15.0
SYNC_WAIT_S = 5.0
SETTLE_WAIT_S = 10.0
DEPOSED_HOLD_S = 6.0
"""How long the cut holds after the new leader is named, as a ``leader-deposed`` partition's does: the old
leader still takes writes from the clients that reach it, and with the bug acknowledges them with the catch-up
member alone. Windows that healed just after the election once cut a synced leader that no write reached
in the time it was cut off, and the bug went uncaught."""
ELECTION_POLL_S = 0.2
POLL_S = 0.02
ROUNDS = 3
"""How many tries a window makes at most. A try is spent when no new leader is elected during the cut or
the cut-off leader stops leading before it ends (another window's kill, pause or power loss of one of the
tablet's nodes); only a try that outlasts both can lose what the leader acknowledged with its catch-up
member. When a window had one try, a run's only window was often spent so, and ``count-pre-voter-acks``
was missed."""
NEXT_ROUND_BEFORE_S = 40.0
"""A window starts another try only this soon after it began."""


class CatchUpPartitionNemesis:
    """Add a replica, and as it starts catching up, cut the leader and it off from the other voters."""

    name = "catch-up-partition"
    color = "#2a9d8f"
    needs = frozenset({NETWORK})

    def __init__(self) -> None:
        self._held: set[str] = set()

    def targets(self) -> Sequence[str]:
        """cut-voters: the only shape."""
        return TARGETS

    async def start(self, cluster: ClusterView, spec: FaultSpec, rng: random.Random) -> dict[str, Any]:
        """Run rounds (add a replica, wait for its promote stage and the stream's sync, partition) until one
        exposes the rule or :data:`ROUNDS` are spent; return the last round, with the earlier ones."""
        began = time.monotonic()
        earlier: list[dict[str, Any]] = []
        while True:
            got = await self._round(cluster, spec, rng)
            if got.get("exposed") or len(earlier) + 1 >= ROUNDS or time.monotonic() - began > NEXT_ROUND_BEFORE_S:
                return {**got, "rounds": earlier} if earlier else got
            earlier.append({k: got[k] for k in ("tablet", "leader", "new_leader", "spoiled", "skipped") if k in got})
            await self.stop(cluster)  # heal, and put the count back, so that the next round adds a replica again

    async def _round(self, cluster: ClusterView, spec: FaultSpec, rng: random.Random) -> dict[str, Any]:
        """One try: a migration, then the cut; what was done, and whether it ``exposed`` the rule."""
        async def opening() -> tuple[set[str], dict[str, Any]] | None:
            with contextlib.suppress(TimeoutError, RpcError, OSError):
                live, ready = settled_with_spare(await master_status(cluster))
                if ready:
                    return live, ready
            return None

        found = await poll_until(opening, SETTLE_WAIT_S, ELECTION_POLL_S)
        if found is None:
            return {"target": spec.target,
                    "skipped": f"no settled tablet with a spare live node within {SETTLE_WAIT_S} s"}
        live, ready = found
        full = {t: tab for t, tab in ready.items() if len(tab["acting"]) >= 3}
        t = rng.choice(sorted(full or ready, key=int))
        tab = ready[t]
        new = rng.choice(sorted(live - set(tab["up"])))
        try:
            await admin(cluster, "add_replica", {"tablet": int(t), "node": new, "config_id": tab["config_id"]})
        except RpcError as e:
            return {"target": spec.target, "tablet": int(t), "skipped": f"add_replica refused: {e.code}"}
        held_counts(cluster).add(t)
        self._held.add(t)
        deadline = time.monotonic() + PROMOTE_WAIT_S
        stage, cur = None, tab
        while time.monotonic() < deadline:
            st = await master_status(cluster)
            cur = st["tablets"][t]
            stage = (cur.get("migration") or {}).get("stage")
            if stage == "promote" or new in (cur.get("acting") or []):
                break
            await asyncio.sleep(POLL_S)
        if stage != "promote":
            return {"target": spec.target, "tablet": int(t), "new": new, "skipped": f"migration stage {stage}"}
        name = {m: r["name"] for m, r in st["members"].items()}
        # The leader now, not the one before the migration: a kill or an election may have replaced it.
        leader, learner = name.get(cur.get("leader") or "", ""), name[new]
        if not leader:
            return {"target": spec.target, "tablet": int(t), "new": new, "skipped": "no leader at promote"}
        voters = sorted(name[m] for m in cur["acting"] if name[m] != leader)
        synced = new not in cur["acting"] and await self._await_synced(cluster, leader, t, new, voters)
        if not synced:
            return {"target": spec.target, "tablet": int(t), "leader": leader, "catching_up": learner,
                    "voters": voters, "synced": False, "exposed": False,
                    "spoiled": f"the catch-up member or a voter was not synced within {SYNC_WAIT_S} s"}
        rest = [n for n in cluster.nodes() if n not in (leader, learner, *voters)]
        grudge = complete_grudge([[leader, learner], voters + rest + sorted(cluster.members(CONTROL))])
        at_cut = await replica_summary(cluster, leader, t) or {}
        await cluster.network.partition(grudge)
        elected = await self._await_new_leader(cluster, t, cur["leader"])
        if elected:
            await asyncio.sleep(DEPOSED_HOLD_S)
        spoiled = await self._still_leading(cluster, leader, t, at_cut) if elected else "no new leader was elected"
        return {"target": spec.target, "tablet": int(t), "leader": leader, "catching_up": learner,
                "voters": voters, "synced": synced, "grudge": grudge, "new_leader": name.get(elected or "", elected),
                "exposed": spoiled is None, **({"spoiled": spoiled} if spoiled else {})}

    @staticmethod
    async def _still_leading(cluster: ClusterView, leader: str, tablet: str, at_cut: dict[str, Any]) -> str | None:
        """Why the cut-off leader no longer shows the rule (it is not leading at the epoch it had at the cut:
        another window killed, paused or restarted it), or None. A cut leader of ``count-pre-voter-acks``
        once stopped committing and was restarted in the middle of the cut, and nothing it acknowledged
        could be lost."""
        now = await replica_summary(cluster, leader, tablet)
        if now is None:
            return f"{leader} did not answer at the end of the cut"
        if now.get("status") != "leader" or now.get("epoch") != at_cut.get("epoch"):
            return (f"{leader} was no longer leading at epoch {at_cut.get('epoch')} "
                    f"({now.get('status')} at {now.get('epoch')})")
        return None

    @staticmethod
    async def _await_synced(cluster: ClusterView, leader: str, tablet: str, new: str, voters: Sequence[str]) -> bool:
        """Wait (at most :data:`SYNC_WAIT_S`) until ``leader`` reports its stream to catch-up member ``new``
        synced and every other voter among its followers; whether it did. The operator promotes the member
        soon after, so the fault polls the leader itself rather than the operator's heartbeat view. A voter
        that is down cannot help elect a new leader: once another window had killed one of the two, the
        operators' elections failed for the whole cut, and the old leader was elected again."""
        async def check() -> bool:
            rep = await replica_summary(cluster, leader, tablet) or {}
            return int((rep.get("pre_voters") or {}).get(new, -1)) >= 0 and \
                set(voters) <= set(rep.get("followers") or [])
        return bool(await poll_until(check, SYNC_WAIT_S, POLL_S))

    @staticmethod
    async def _await_new_leader(cluster: ClusterView, tablet: str, old: str) -> str | None:
        """Hold the partition until the operators have elected another leader (bounded): the window must
        outlast failure detection, or the cut-off leader is never replaced and nothing is lost."""
        async def check() -> str | None:
            with contextlib.suppress(TimeoutError, RpcError, OSError):
                cur = (await master_status(cluster))["tablets"][tablet]
                if cur.get("leader") and cur["leader"] != old:
                    return str(cur["leader"])
            return None

        got: str | None = await poll_until(check, ELECTION_WAIT_S, ELECTION_POLL_S)
        return got

    async def stop(self, cluster: ClusterView) -> dict[str, Any]:
        """Heal the network, release the tablet it held, and put every tablet's replica count back."""
        await cluster.network.heal()
        held_counts(cluster).difference_update(self._held)
        self._held.clear()
        restored = await restore_replica_counts(cluster)
        return {"healed": True, "restored": restored}

    async def heal(self, cluster: ClusterView) -> None:
        """Heal the network and restore replica counts."""
        await cluster.network.heal()
        with contextlib.suppress(TimeoutError, RpcError, OSError):
            await self.stop(cluster)


def package() -> CatchUpPartitionNemesis:
    """The catch-up-partition fault package."""
    return CatchUpPartitionNemesis()
