"""Wipe fault: kill a node, delete its data directory and start it again (amnesia).

The node must come back through the disk-loss path: a new identity, re-replicated by the control
plane, never answering under its old UUID.

A node is wiped only in the cluster's damage guard's turn (:mod:`fencepost_reference.faults.guard`),
which a wipe waits for up to ``WIPE_WAIT_S``:
when the master reports every tablet whole (steady, no migration, a full acting set, every acting member
normal and alive), the last wiped node's old identity is retired, and no other fault is taking a replica's
data. Wiping one node while the last wipe is still being repaired is wiping a majority of some tablet,
which loses acknowledged writes in any system (it did: three wipes in 15 s of a three-node cluster, before
the master had replaced the first, emptied every tablet).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from fencepost import DISK, PROCESSES, ClusterView, FaultSpec
from fencepost_reference.faults.guard import guard_of, identities
from fencepost_reference.info import cluster_info, node_uuid
from fencepost_reference.master import master_status
from system.wire import ConnectionLost, RpcError, Unreachable

WIPE_WEIGHT = 3.0
"""How often the default campaign picks a wipe, against 1 for a blunt package: many wipes find the cluster
not whole and are skipped, and a wiped node's rejoin is where identity bugs show."""

WIPE_WAIT_S = 30.0
"""How long a wipe waits in its turn for the cluster to be whole: as long as a file damage waits
(:data:`~fencepost_reference.faults.corrupt.SETTLE_S`). The default campaign's other faults keep
some tablet migrating much of the time: with no wait the guard skipped every wipe of some of
``no-uuid-check``'s runs, each for a migration in progress at that instant, so the bug went uncaught. A
wait of 15 s was not enough either: most wipes were still skipped (far more than file damages), many of
them because a file damage held the guard's turn, waiting its 30 s for the cluster to be whole, and the
wipe gave up first; ``no-uuid-check`` was still mostly missed."""


class WipeNemesis:
    """Wipe one node's disk; the window's end is when the node has been restarted."""

    name = "wipe"
    color = "#2e86ab"
    needs = frozenset({PROCESSES, DISK})
    generic = True
    """A fault of any system, not aimed at one protocol window: the default campaign weighs it 1."""
    mix_weight = WIPE_WEIGHT

    def __init__(self, wait_s: float = WIPE_WAIT_S) -> None:
        self.wait_s = wait_s
        """How long a start waits for the damage guard's turn before it skips."""
        self._wiping: str | None = None

    def targets(self) -> Sequence[str]:
        """Only one node at a time: wiping a majority loses acknowledged data by design."""
        return ("one",)

    async def start(self, cluster: ClusterView, spec: FaultSpec, rng: random.Random) -> dict[str, Any]:
        """Wipe one random node, in the damage guard's turn (waiting up to :attr:`wait_s` for it)."""
        guard = guard_of(cluster)
        async with guard.turn(cluster, self.wait_s) as why:
            if why is not None:
                return {"target": spec.target, "skipped": why}
            node = rng.choice(sorted(cluster.nodes()))
            guard.damaged([node])
            if cluster_info(cluster).get("master"):
                try:
                    status = await master_status(cluster)
                except (TimeoutError, OSError, RpcError, ConnectionLost, Unreachable) as e:
                    return {"target": spec.target, "skipped": f"the master did not answer ({type(e).__name__})"}
                guard.replacing = identities(status.get("members") or {}, node)
            old_uuid = await node_uuid(cluster, node)
            self._wiping = node  # a run that ends during the wipe must still bring the node back
            await cluster.wipe(node)
            self._wiping = None
            return {"target": spec.target, "wiped": [node], "old_uuids": {node: old_uuid}}

    async def stop(self, cluster: ClusterView) -> dict[str, Any]:
        """Nothing to undo: the wiped node was restarted as part of the wipe."""
        return {}

    async def heal(self, cluster: ClusterView) -> None:
        """Finish a wipe that the run's end cut short, so the node runs again (with a new, empty disk)."""
        node, self._wiping = self._wiping, None
        if node is not None and not cluster.processes.running(node):
            await cluster.wipe(node)


def package() -> WipeNemesis:
    """The wipe fault package."""
    return WipeNemesis()
