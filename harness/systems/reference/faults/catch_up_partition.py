"""Catch-up partition fault: cut a tablet's voters off while a new replica catches up (Kudu PRE_VOTER).

A replica that joins a tablet first streams as a catch-up member (PRE_VOTER): the leader sends it every
entry, but its acknowledgements must not count toward the commit majority until a reconfiguration makes
it a voter. This fault opens the window where that rule matters:

1. add a replica of one tablet on a node that does not hold it (``add_replica`` through the master);
2. wait until the migration reaches ``promote`` (the copy is done and the new replica is streaming);
3. partition the leader and the new replica from the tablet's other voters and from the operators, and
   hold it until the operators have elected a new leader among those voters (at most 15 s).

The leader can now reach only a non-voter. A correct leader commits nothing (its writes time out), and
the operators elect a new leader among the cut-off voters. A leader that counts the catch-up member
acknowledges writes that no voter majority holds; the new leader never had them, so the linearizability
and amnesia checkers see acknowledged writes vanish. The window's end heals the network and puts the
replica count back. It needs a node outside the tablet's up set (run with ``--nodes 4`` or more).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import Sequence
from typing import Any

from harness.capabilities import NETWORK
from harness.cluster import Cluster
from harness.protocols import FaultSpec
from harness.systems.api import CONTROL
from harness.systems.reference.master import admin, master_status, restore_replica_counts, settled_with_spare
from harness.targets import complete_grudge
from system.wire import RpcError

TARGETS = ("cut-voters",)
PROMOTE_WAIT_S = 20.0
ELECTION_WAIT_S = 15.0
POLL_S = 0.02


class CatchUpPartitionNemesis:
    """Add a replica, and as it starts catching up, cut the leader and it off from the other voters."""

    name = "catch-up-partition"
    color = "#2a9d8f"
    needs = frozenset({NETWORK})

    def targets(self) -> Sequence[str]:
        """cut-voters: the only shape."""
        return TARGETS

    async def start(self, cluster: Cluster, spec: FaultSpec, rng: random.Random) -> dict[str, Any]:
        """Start the migration, wait for its promote stage, then partition; return what was done."""
        st = await master_status(cluster)
        live, ready = settled_with_spare(st)
        if not ready:
            return {"target": spec.target, "skipped": "no settled tablet with a spare live node"}
        t = rng.choice(sorted(ready, key=int))
        tab = ready[t]
        new = rng.choice(sorted(live - set(tab["up"])))
        try:
            await admin(cluster, "add_replica", {"tablet": int(t), "node": new, "config_id": tab["config_id"]})
        except RpcError as e:
            return {"target": spec.target, "tablet": int(t), "skipped": f"add_replica refused: {e.code}"}
        deadline = time.monotonic() + PROMOTE_WAIT_S
        stage = None
        while time.monotonic() < deadline:
            cur = (await master_status(cluster))["tablets"][t]
            mig = cur.get("migration") or {}
            stage = mig.get("stage")
            if stage == "promote" or new in (cur.get("acting") or []):
                break
            await asyncio.sleep(POLL_S)
        if stage != "promote":
            return {"target": spec.target, "tablet": int(t), "new": new, "skipped": f"migration stage {stage}"}
        name = {m: r["name"] for m, r in st["members"].items()}
        leader, learner = name[tab["leader"]], name[new]
        voters = sorted(name[m] for m in tab["acting"] if name[m] != leader)
        rest = [n for n in cluster.nodes() if n not in (leader, learner, *voters)]
        grudge = complete_grudge([[leader, learner], voters + rest + sorted(cluster.members(CONTROL))])
        await cluster.network.partition(grudge)
        elected = await self._await_new_leader(cluster, t, tab["leader"])
        return {"target": spec.target, "tablet": int(t), "leader": leader, "catching_up": learner,
                "voters": voters, "grudge": grudge, "new_leader": name.get(elected or "", elected)}

    @staticmethod
    async def _await_new_leader(cluster: Cluster, tablet: str, old: str) -> str | None:
        """Hold the partition until the operators have elected another leader (bounded): the window must
        outlast failure detection, or the cut-off leader is never replaced and nothing is lost."""
        deadline = time.monotonic() + ELECTION_WAIT_S
        while time.monotonic() < deadline:
            with contextlib.suppress(TimeoutError, RpcError, OSError):
                cur = (await master_status(cluster))["tablets"][tablet]
                if cur.get("leader") and cur["leader"] != old:
                    return str(cur["leader"])
            await asyncio.sleep(0.2)
        return None

    async def stop(self, cluster: Cluster) -> dict[str, Any]:
        """Heal the network and put every tablet's replica count back."""
        await cluster.network.heal()
        restored = await restore_replica_counts(cluster)
        return {"healed": True, "restored": restored}

    async def heal(self, cluster: Cluster) -> None:
        """Heal the network and restore replica counts."""
        await cluster.network.heal()
        with contextlib.suppress(TimeoutError, RpcError, OSError):
            await self.stop(cluster)


def package() -> CatchUpPartitionNemesis:
    """The catch-up-partition fault package."""
    return CatchUpPartitionNemesis()
