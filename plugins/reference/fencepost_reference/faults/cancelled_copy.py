"""Cancelled-copy fault: cancel a migration while its tablet copy is still downloading (Scylla topology guards).

Every migration stage runs under a session id, and cancelling a migration closes its sessions on the new
node (a barrier), so a copy that was still in flight must have no effect when it lands. This fault makes a
copy land late:

1. wait (at most ``SETTLE_WAIT_S``) for a settled tablet with a live node D outside it; add a replica of
   the tablet on D (``add_replica`` through the master), and at once cut D off from the tablet's
   replicas, so D's download from its leader will hang, whichever replica leads by then (the operators
   still reach D; cutting the leader alone let a copy from a leader elected meanwhile complete);
2. wait until the migration is in its ``copy`` stage and D reports the copy started (at most
   ``COPY_START_S``);
3. cancel the migration (``cancel_migration``, and the replica count back) and wait until the operator
   has finished cancelling it, which closes the copy's session on D;
4. heal: the download completes, from a closed session.

A correct node drops that copy (``stale_session``); a node that applies it makes the replica READY under a
closed session, which the topology-guards checker finds in D's event log. It needs a node outside the
tablet's up set (run with ``--nodes 4`` or more).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import Sequence
from typing import Any

from fencepost import NETWORK, ClusterView, FaultSpec, poll_until
from fencepost_reference.info import cluster_info, replica_summary
from fencepost_reference.master import admin, master_status, restore_replica_counts, settled_with_spare
from system.wire import RpcError

TARGETS = ("cancel-during-copy",)
SETTLE_WAIT_S = 10.0
"""How long the window waits for a settled tablet with a spare live node. Without the wait, a default
campaign run's one window found none, with other faults' moves and kills under way, and did nothing."""
STAGE_WAIT_S = 20.0
CANCEL_WAIT_S = 15.0
BARRIER_GRACE_S = 1.0
COPY_START_S = 5.0
"""How long the window waits for D to report the copy started. It had slept 1 s, and in a default campaign
run another fault had cut D off from the operators then: no copy was in flight to land late."""
POLL_S = 0.02
SETTLE_POLL_S = 0.25
COPY_POLL_S = 0.05


class CancelledCopyNemesis:
    """Hang a tablet copy, cancel its migration, and let the copy land afterwards."""

    name = "cancelled-copy"
    color = "#bc6c25"
    needs = frozenset({NETWORK})

    def targets(self) -> Sequence[str]:
        """cancel-during-copy: the only shape."""
        return TARGETS

    async def _wait(self, cluster: ClusterView, tablet: str, done: Any, limit_s: float) -> dict[str, Any] | None:
        """Poll the tablet's master status until ``done(status)`` holds; the status, or None at the limit."""
        async def check() -> dict[str, Any] | None:
            with contextlib.suppress(TimeoutError, RpcError, OSError):
                cur: dict[str, Any] = (await master_status(cluster))["tablets"][tablet]
                if done(cur):
                    return cur
            return None

        return await poll_until(check, limit_s, POLL_S)

    @staticmethod
    async def _settled(cluster: ClusterView) -> tuple[dict[str, str], set[str], dict[str, Any]] | None:
        """Member names, live members and the settled tablets with a spare live node, once there is one
        (at most ``SETTLE_WAIT_S``); None if there never was."""
        async def check() -> tuple[dict[str, str], set[str], dict[str, Any]] | None:
            with contextlib.suppress(TimeoutError, RpcError, OSError):
                st = await master_status(cluster)
                live, ready = settled_with_spare(st)
                if ready:
                    return {m: r["name"] for m, r in st["members"].items()}, live, ready
            return None

        return await poll_until(check, SETTLE_WAIT_S, SETTLE_POLL_S)

    @staticmethod
    async def _copying(cluster: ClusterView, node: str, tablet: str, session: Any) -> bool:
        """Whether ``node`` reports ``tablet`` copying under ``session`` within ``COPY_START_S``."""
        async def check() -> bool:
            rep = await replica_summary(cluster, node, tablet)
            return rep is not None and rep.get("status") == "copying" and rep.get("session") == session

        return bool(await poll_until(check, COPY_START_S, COPY_POLL_S))

    async def start(self, cluster: ClusterView, spec: FaultSpec, rng: random.Random) -> dict[str, Any]:
        """Steps 1-4 of the module docstring; return what was done."""
        found = await self._settled(cluster)
        if found is None:
            return {"target": spec.target, "skipped": "no settled tablet with a spare live node"}
        name, live, ready = found
        t = rng.choice(sorted(ready, key=int))
        tab = ready[t]
        new = rng.choice(sorted(live - set(tab["up"])))
        out: dict[str, Any] = {"target": spec.target, "tablet": int(t), "new": name[new]}
        leader, dst = name[tab["leader"]], name[new]
        sources = sorted(name[m] for m in tab["up"])
        try:
            await admin(cluster, "add_replica", {"tablet": int(t), "node": new, "config_id": tab["config_id"]})
        except RpcError as e:
            return {**out, "skipped": f"add_replica refused: {e.code}"}
        # Cut the link first: the copy starts moments after the copy stage is recorded, and takes
        # milliseconds, so only a download begun on a cut link is sure to hang.
        await cluster.network.partition({dst: sources, **{n: [dst] for n in sources}})
        out["leader"], out["cut_from"] = leader, sources
        cur = await self._wait(cluster, t, lambda c: (c.get("migration") or {}).get("stage") not in (None, "pre_voter"),
                               STAGE_WAIT_S)
        mig = (cur or {}).get("migration") or {}
        if not cur or mig.get("stage") != "copy":
            return {**out, "skipped": f"migration stage {mig.get('stage')}"}
        out["session"] = session = mig.get("session")
        out["copying"] = await self._copying(cluster, dst, t, session)  # D's download hangs on the cut link
        try:
            res = await admin(cluster, "cancel_migration", {"tablet": int(t), "config_id": cur["config_id"]})
            out["up"] = res["up"]
            rf = int(cluster_info(cluster).get("replication") or 3)  # or the policy adds a replica again
            await admin(cluster, "change_replica_count", {"tablet": int(t), "count": rf, "config_id": res["config_id"]})
        except RpcError as e:
            out["cancel_error"] = e.code
        done = await self._wait(cluster, t, lambda c: (c.get("migration") or {}).get("session") != session,
                                CANCEL_WAIT_S)
        out["cancelled"] = done is not None
        await asyncio.sleep(BARRIER_GRACE_S)
        await cluster.network.heal()
        return out

    async def stop(self, cluster: ClusterView) -> dict[str, Any]:
        """Heal the network and put every tablet's replica count back."""
        await cluster.network.heal()
        return {"healed": True, "restored": await restore_replica_counts(cluster)}

    async def heal(self, cluster: ClusterView) -> None:
        """Heal the network and restore replica counts."""
        await cluster.network.heal()
        with contextlib.suppress(TimeoutError, RpcError, OSError):
            await self.stop(cluster)


def package() -> CancelledCopyNemesis:
    """The cancelled-copy fault package."""
    return CancelledCopyNemesis()
