"""Lose-unsynced fault: a power loss. The chosen nodes die (kill -9) and their disks forget everything
they were never told to fsync; then they start again.

Needs the power-loss capability (the local backend mounts :mod:`harness.backends.lazyfs` over every
node's data directory when a run uses this package). Targets: ``one`` or ``leader`` (one machine loses power),
``majority`` or ``all`` (the rack does: nodes that acknowledged an entry from their caches all lose
it). Half of the faults also tear the last write of each node's disk. A correct system loses nothing
it acknowledged and never forgets an epoch; torn or missing files must be detected, not served.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from harness.capabilities import POWER_LOSS, PROCESSES
from harness.cluster_view import ClusterView
from harness.protocols import FaultSpec
from harness.targets import choose_nodes

TARGETS = ("one", "leader", "majority", "all")


class LoseUnsyncedNemesis:
    """Power loss of one node or several at once; the window's end has nothing to undo."""

    name = "lose-unsynced"
    color = "#bc6c25"
    needs = frozenset({PROCESSES, POWER_LOSS})
    generic = True
    """A fault of any system, not aimed at one protocol window: the default campaign weighs it 1."""
    """The backend must put node data on the lazy filesystem."""

    def targets(self) -> Sequence[str]:
        """one, leader, majority or all."""
        return TARGETS

    async def start(self, cluster: ClusterView, spec: FaultSpec, rng: random.Random) -> dict[str, Any]:
        """Cut the power of the chosen nodes, tearing the last write half of the time, and restart them."""
        nodes = await choose_nodes(cluster, spec.target, rng)
        tear = rng.random() < 0.5
        return {"target": spec.target, "tear": tear, **await cluster.disk.lose_unsynced(nodes, tear, rng)}

    async def stop(self, cluster: ClusterView) -> dict[str, Any]:
        """Nothing to undo: the nodes restarted as part of the fault."""
        return {}

    async def heal(self, cluster: ClusterView) -> None:
        """Nothing to undo."""


def package() -> LoseUnsyncedNemesis:
    """The lose-unsynced fault package."""
    return LoseUnsyncedNemesis()
