"""Wipe fault: a node loses its whole data directory and comes back empty (amnesia), one node at a time.

Through the cluster's disk capability: the node is killed, given an empty data directory, prepared for by
the system's rejoin step when it has one (etcd: member remove, then member add), and started again. A
system that must not lose a disk at some moments says why (its ``wipe_refusal``), and the window is
skipped, saying so: wiping a second member before the first has caught up is wiping a majority's data.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from harness.capabilities import DISK, PROCESSES
from harness.cluster_view import ClusterView
from harness.plugin_api import GuardsWipes
from harness.protocols import FaultSpec


class WipeNemesis:
    """Wipe one random node; the window's end has nothing to undo."""

    name = "wipe"
    color = "#2e86ab"
    needs = frozenset({PROCESSES, DISK})
    generic = True
    """A fault of any system, not aimed at one protocol window: the default campaign weighs it 1."""

    def targets(self) -> Sequence[str]:
        """Only one node at a time."""
        return ("one",)

    async def start(self, cluster: ClusterView, spec: FaultSpec, rng: random.Random) -> dict[str, Any]:
        """Wipe a random node, unless the system refuses it now."""
        if isinstance(cluster.system, GuardsWipes):
            why = await cluster.system.wipe_refusal(cluster)
            if why is not None:
                return {"target": spec.target, "skipped": why}
        node = rng.choice(cluster.nodes())
        extra = await cluster.wipe(node)
        return {"target": spec.target, "wiped": [node], "rejoined_with": list(extra)}

    async def stop(self, cluster: ClusterView) -> dict[str, Any]:
        """Nothing to undo: the node was started again as part of the wipe."""
        return {}

    async def heal(self, cluster: ClusterView) -> None:
        """Nothing to undo."""


def package() -> WipeNemesis:
    """The wipe fault package."""
    return WipeNemesis()
