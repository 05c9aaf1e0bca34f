"""Corrupt fault: kill a node, damage one of its tablets' files, start it again.

Truncating or bit-flipping the WAL: the node must detect the damage by its checksums at start and
refuse to serve the damaged tablet (the control plane then repairs it by tablet copy). Deleting the
consensus metadata: the node must treat it as disk loss and refuse to start under its UUID; the
backend then reformats it and it rejoins as a new node. Either way it must never serve wrong data or
drop an acknowledged entry. The window's end has nothing to undo.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from harness.backends.file_damage import KINDS
from harness.protocols import Backend, FaultSpec


class CorruptNemesis:
    """Damage one node's WAL on disk."""

    name = "corrupt"
    color = "#6a4c93"

    def targets(self) -> Sequence[str]:
        """truncate (a torn tail), bitflip (a checksum mismatch) or delete-metadata (lost consensus metadata)."""
        return KINDS

    async def start(self, backend: Backend, spec: FaultSpec, rng: random.Random) -> dict[str, Any]:
        """Damage a random node's tablet files and restart the node."""
        node = rng.choice(sorted(backend.nodes()))
        return {"target": spec.target, **await backend.damage_wal(node, spec.target, rng)}

    async def stop(self, backend: Backend) -> dict[str, Any]:
        """Nothing to undo: the node restarted as part of the fault."""
        return {}

    async def heal(self, backend: Backend) -> None:
        """Nothing to undo."""


def package() -> CorruptNemesis:
    """The corrupt fault package."""
    return CorruptNemesis()
