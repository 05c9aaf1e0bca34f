"""Kill fault: SIGKILL one, a minority, a majority, all, or the leader; restart them when it stops."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from harness.protocols import Backend, FaultSpec
from nemesis.targets import PROCESS_TARGETS, choose_nodes


class KillNemesis:
    """Kill nodes with SIGKILL, then start them again with their data."""

    name = "kill"
    color = "#e4572e"

    def __init__(self) -> None:
        self._down: list[str] = []

    def targets(self) -> Sequence[str]:
        """Which nodes a window may kill."""
        return PROCESS_TARGETS

    async def start(self, backend: Backend, spec: FaultSpec, rng: random.Random) -> dict[str, Any]:
        """Kill the chosen nodes."""
        nodes = await choose_nodes(backend, spec.target, rng)
        for node in nodes:
            self._down.append(node)
            await backend.kill(node)
        return {"target": spec.target, "killed": nodes}

    async def stop(self, backend: Backend) -> dict[str, Any]:
        """Restart every node this package killed."""
        started = []
        while self._down:
            node = self._down.pop()
            await backend.start(node)
            started.append(node)
        return {"started": sorted(started)}

    async def heal(self, backend: Backend) -> None:
        """Restart anything still down."""
        await self.stop(backend)


def package() -> KillNemesis:
    """The kill fault package."""
    return KillNemesis()
