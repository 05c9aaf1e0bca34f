"""Lagging-contract fault: remove a replica while the member that stays behind lags (Oxia's contract rule).

A contract may drop a node only once the commit index, recomputed over the remaining members, is not
lower than it is now. On loopback every follower keeps up, so the rule rarely has anything to wait for.
This fault makes it wait:

1. pick a tablet with three settled replicas: leader L, followers F (will stay) and G (will go);
2. cut F off from L and G (not from the operators), so F falls behind while L and G commit writes;
3. after 1-2 s, ask the master to remove G (``remove_replica``).

A correct leader refuses the contract's commit phase (``contract_not_safe``) until F has caught up, which
it can only do once the window ends and heals the network. A leader that applies it at once leaves every
entry F had not confirmed on L alone, which the redundancy checker reports from the leader's own log.
The window's end heals the network and puts the replica count back. Steps 2-3 run in the damage guard's
contraction turn (:meth:`~fencepost_reference.faults.guard.DamageGuard.contraction`): a damage beside
them can take the only up-to-date copy. The turn waits up to ``CONTRACT_WAIT_S`` for the tablet to be whole.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import Sequence
from typing import Any

from fencepost import NETWORK, ClusterView, FaultSpec, complete_grudge
from fencepost_reference.faults.guard import guard_of
from fencepost_reference.master import admin, master_status, restore_replica_counts
from system.wire import RpcError

TARGETS = ("remove-behind-laggard",)
LAG_S = (1.0, 2.0)
CONTRACT_WAIT_S = 15.0
"""How long a window waits for its tablet's full, synced ensemble and for the last damage to be visible: in
the default campaign's mix, skipping instead lost most windows."""

LAGGING_CONTRACT_WEIGHT = 4.0
"""How often the default campaign picks this package, against 2 for the other aimed ones: its window needs a
settled tablet and the damage guard's turn, and at 2 a 120 s plan often held one window, late enough for
the run's end to cut it off."""


class LaggingContractNemesis:
    """Lag one follower, then remove the other one."""

    name = "lagging-contract"
    color = "#e76f51"
    needs = frozenset({NETWORK})
    mix_weight = LAGGING_CONTRACT_WEIGHT

    def targets(self) -> Sequence[str]:
        """remove-behind-laggard: the only shape."""
        return TARGETS

    async def start(self, cluster: ClusterView, spec: FaultSpec, rng: random.Random) -> dict[str, Any]:
        """Partition the staying follower, wait, and remove the other; return what was done."""
        ready = _settled(await master_status(cluster))
        if not ready:
            return {"target": spec.target, "skipped": "no settled tablet with three replicas"}
        t = rng.choice(sorted(ready, key=int))
        async with guard_of(cluster).contraction(cluster, t, CONTRACT_WAIT_S) as why:
            if why is not None:
                return {"target": spec.target, "tablet": int(t), "skipped": why}
            st = await master_status(cluster)  # the guard may have waited: act on the tablet as it is now
            if (tab := _settled(st).get(t)) is None:
                return {"target": spec.target, "tablet": int(t), "skipped": "the tablet is no longer settled"}
            name = {m: r["name"] for m, r in st["members"].items()}
            followers = sorted(m for m in tab["acting"] if m != tab["leader"])
            stays, goes = rng.sample(followers, 2)
            others = [n for n in cluster.nodes() if n != name[stays]]
            await cluster.network.partition(complete_grudge([[name[stays]], others]))
            lag = round(rng.uniform(*LAG_S), 2)
            await asyncio.sleep(lag)
            try:
                res = await admin(cluster, "remove_replica", {"tablet": int(t), "node": goes,
                                                              "config_id": tab["config_id"]})
            except RpcError as e:
                return {"target": spec.target, "tablet": int(t), "lagging": name[stays], "lag_s": lag,
                        "skipped": f"remove_replica refused: {e.code}"}
        return {"target": spec.target, "tablet": int(t), "leader": name[tab["leader"]], "lagging": name[stays],
                "removed": name[goes], "lag_s": lag, "up": res["up"]}

    async def stop(self, cluster: ClusterView) -> dict[str, Any]:
        """Heal the network and put every tablet's replica count back."""
        await cluster.network.heal()
        return {"healed": True, "restored": await restore_replica_counts(cluster)}

    async def heal(self, cluster: ClusterView) -> None:
        """Heal the network and restore replica counts."""
        await cluster.network.heal()
        with contextlib.suppress(TimeoutError, RpcError, OSError):
            await self.stop(cluster)


def _settled(status: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The tablets of the master's ``status`` that are led, not migrating, and have three acting replicas
    matching their placement."""
    return {t: tab for t, tab in status["tablets"].items()
            if tab["migration"] is None and tab["leader"] and tab["acting"] and len(tab["acting"]) == 3
            and sorted(tab["up"] or []) == sorted(tab["acting"])}


def package() -> LaggingContractNemesis:
    """The lagging-contract fault package."""
    return LaggingContractNemesis()
