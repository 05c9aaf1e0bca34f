"""Config-race fault: two admins change one tablet's placement at the same moment (Kudu KUDU-1129).

Both read the tablet's committed config id once, then send their changes together, each naming that id.
The admin API promises compare-and-set: at most one of the two may apply; the other must be refused with
``stale_config`` (its caller decided on a config that is no longer current). Every call, the config id it
named and what the master answered (for a refusal, the committed config id it gave) go into the
fault's record, so
:mod:`fencepost_reference.checkers.config_cas` can check that promise. Targets:

- ``remove-two``: both remove a different replica (from three replicas, both applying leaves one);
- ``move-two``: both move a different replica to a node outside the up set (needs two spare nodes,
  else this is ``remove-two``).

The window's end puts the replica count back (the policy loop re-adds replicas) and heals any member left
``decommissioning``; nothing else needs undoing. The changes are sent in the damage guard's contraction
turn (:meth:`~fencepost_reference.faults.guard.DamageGuard.contraction`): a removal beside a wipe can
leave a tablet a majority of wiped copies. A window waits up to ``RACE_WAIT_S`` for that turn, then reads
the tablet again, so that the config id both changes name is the one committed when they are sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import Sequence
from typing import Any

from fencepost import ClusterView, FaultSpec
from fencepost_reference.faults.guard import guard_of
from fencepost_reference.master import admin, master_status, restore_replica_counts
from system.wire import RpcError

TARGETS = ("remove-two", "move-two")
RACE_WAIT_S = 15.0
"""How long a window waits for the damage guard's contraction turn (as a lagging contract does). Without the
wait, config-race windows found the other lane's wipe, file damage, contraction or stalled swap holding the
turn and seldom acted, and ``no-cas-config-change`` went uncaught."""


def _settled(tab: dict[str, Any]) -> bool:
    """Whether a tablet of the master's status has three or more replicas and no migration: one to race on."""
    return bool(tab.get("up")) and len(tab["up"]) >= 3 and tab.get("migration") is None


async def _one(cluster: ClusterView, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """One admin call; its record holds the parameters and either ``result`` or ``error`` (with a refusal's
    ``committed``: the config id the master says was committed when it refused)."""
    record: dict[str, Any] = {"method": method, **params}
    try:
        record["result"] = await admin(cluster, method, params)
    except RpcError as e:
        record["error"] = e.code
        if e.data.get("config_id") is not None:
            record["committed"] = e.data["config_id"]  # the config the master held when it refused
    except (TimeoutError, OSError) as e:
        record["error"] = f"unreachable: {e}"
    return record


class ConfigRaceNemesis:
    """Two concurrent placement changes naming the same committed config id."""

    name = "config-race"
    color = "#9c6644"
    needs: frozenset[str] = frozenset()

    def __init__(self, wait_s: float = RACE_WAIT_S) -> None:
        self.wait_s = wait_s
        """How long a start waits for the damage guard's contraction turn before it skips."""

    def targets(self) -> Sequence[str]:
        """remove-two or move-two."""
        return TARGETS

    async def start(self, cluster: ClusterView, spec: FaultSpec, rng: random.Random) -> dict[str, Any]:
        """Read one tablet's config id, then send two changes naming it at once; record both answers."""
        st = await master_status(cluster)
        tablets = {t: tab for t, tab in st["tablets"].items() if _settled(tab)}
        if not tablets:
            return {"target": spec.target, "skipped": "no settled tablet with three replicas"}
        t = rng.choice(sorted(tablets, key=int))
        async with guard_of(cluster).contraction(cluster, t, self.wait_s) as why:
            if why is not None:
                return {"target": spec.target, "tablet": int(t), "skipped": why}
            # Read again: a wait for the turn outlives the config id read above.
            st = await master_status(cluster)
            tab = st["tablets"].get(t) or {}
            if not _settled(tab):
                return {"target": spec.target, "tablet": int(t),
                        "skipped": "the tablet was no longer settled with three replicas after the wait"}
            live = sorted(m for m, r in st["members"].items() if r["state"] == "normal" and r["alive"])
            spare = [m for m in live if m not in tab["up"]]
            first, second = rng.sample(sorted(tab["up"]), 2)
            base = {"tablet": int(t), "config_id": tab["config_id"]}
            if spec.target == "move-two" and len(spare) >= 2:
                dst = rng.sample(spare, 2)
                calls = [("move_replica", {**base, "from": first, "to": dst[0]}),
                         ("move_replica", {**base, "from": second, "to": dst[1]})]
            else:
                calls = [("remove_replica", {**base, "node": first}), ("remove_replica", {**base, "node": second})]
            records = await asyncio.gather(*(_one(cluster, m, p) for m, p in calls))
        return {"target": spec.target, "tablet": int(t), "config_id": tab["config_id"], "up": tab["up"],
                "calls": list(records)}

    async def stop(self, cluster: ClusterView) -> dict[str, Any]:
        """Put every tablet's replica count back to the cluster's replication factor."""
        restored = await restore_replica_counts(cluster)
        return {"restored": restored}

    async def heal(self, cluster: ClusterView) -> None:
        """Restore replica counts (the policy loop then re-adds the replicas)."""
        with contextlib.suppress(TimeoutError, RpcError, OSError):
            await self.stop(cluster)


def package() -> ConfigRaceNemesis:
    """The config-race fault package."""
    return ConfigRaceNemesis()
