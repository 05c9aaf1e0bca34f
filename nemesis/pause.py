"""Pause fault: SIGSTOP one, a minority, a majority, all, or the leader; SIGCONT them when it stops."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from harness.protocols import Backend, FaultSpec
from nemesis.targets import PROCESS_TARGETS, choose_nodes


class PauseNemesis:
    """Freeze nodes, then thaw them: a long GC pause or a stalled VM."""

    name = "pause"
    color = "#f3a712"

    def __init__(self) -> None:
        self._paused: list[str] = []

    def targets(self) -> Sequence[str]:
        """Which nodes a window may pause."""
        return PROCESS_TARGETS

    async def start(self, backend: Backend, spec: FaultSpec, rng: random.Random) -> dict[str, Any]:
        """Pause the chosen nodes."""
        nodes = await choose_nodes(backend, spec.target, rng)
        for node in nodes:
            self._paused.append(node)
            await backend.pause(node)
        return {"target": spec.target, "paused": nodes}

    async def stop(self, backend: Backend) -> dict[str, Any]:
        """Resume every node this package paused."""
        resumed = []
        while self._paused:
            node = self._paused.pop()
            await backend.resume(node)
            resumed.append(node)
        return {"resumed": sorted(resumed)}

    async def heal(self, backend: Backend) -> None:
        """Resume anything still paused."""
        await self.stop(backend)


def package() -> PauseNemesis:
    """The pause fault package."""
    return PauseNemesis()
