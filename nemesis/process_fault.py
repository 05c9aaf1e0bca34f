"""A fault that does something to chosen node processes and undoes it when the window ends.

Kill (SIGKILL, then start) and pause (SIGSTOP, then SIGCONT) are both this shape; each is a small file
that names its backend actions.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from harness.protocols import Backend, FaultSpec
from nemesis.targets import PROCESS_TARGETS, choose_nodes

Action = Callable[[Backend, str], Awaitable[None]]


class ProcessFault:
    """Apply ``do`` to the chosen nodes at the start of a window and ``undo`` to them at its end.

    Args:
        name: the package name (``start-NAME`` / ``stop-NAME`` in the history).
        color: the plot shading colour.
        do: what to do to a node, e.g. kill it.
        undo: how to reverse it, e.g. start it.
        did: the past tense recorded in the history (``killed``), and ``undone`` likewise (``started``).
    """

    def __init__(self, name: str, color: str, do: Action, undo: Action, did: str, undone: str) -> None:
        self.name = name
        self.color = color
        self._do, self._undo = do, undo
        self._did, self._undone = did, undone
        self._affected: list[str] = []

    def targets(self) -> Sequence[str]:
        """one, minority, majority, all, or the leader."""
        return PROCESS_TARGETS

    async def start(self, backend: Backend, spec: FaultSpec, rng: random.Random) -> dict[str, Any]:
        """Apply the fault to the chosen nodes."""
        nodes = await choose_nodes(backend, spec.target, rng)
        for node in nodes:
            self._affected.append(node)
            await self._do(backend, node)
        return {"target": spec.target, self._did: nodes}

    async def stop(self, backend: Backend) -> dict[str, Any]:
        """Undo the fault on every node it reached."""
        undone = []
        while self._affected:
            node = self._affected.pop()
            await self._undo(backend, node)
            undone.append(node)
        return {self._undone: sorted(undone)}

    async def heal(self, backend: Backend) -> None:
        """Undo anything still in effect."""
        await self.stop(backend)
