"""Wipe fault: kill a node, delete its data directory and start it again (amnesia).

The node must come back through the disk-loss path: a new identity, re-replicated by the control
plane, never answering under its old UUID.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from harness.protocols import Backend, FaultSpec


class WipeNemesis:
    """Wipe one node's disk; the window's end is when the node has been restarted."""

    name = "wipe"
    color = "#2e86ab"

    def targets(self) -> Sequence[str]:
        """Only one node at a time: wiping a majority loses acknowledged data by design."""
        return ("one",)

    async def start(self, backend: Backend, spec: FaultSpec, rng: random.Random) -> dict[str, Any]:
        """Wipe one random node."""
        node = rng.choice(sorted(backend.nodes()))
        old_uuid = backend.cluster_info().get("uuids", {}).get(node)
        await backend.wipe(node)
        return {"target": spec.target, "wiped": [node], "old_uuids": {node: old_uuid}}

    async def stop(self, backend: Backend) -> dict[str, Any]:
        """Nothing to undo: the wiped node was restarted as part of the wipe."""
        return {}

    async def heal(self, backend: Backend) -> None:
        """Nothing to undo."""


def package() -> WipeNemesis:
    """The wipe fault package."""
    return WipeNemesis()
