"""A fault that does something to chosen node processes and undoes it when the window ends.

Kill (SIGKILL, then start) and pause (SIGSTOP, then SIGCONT) are both this shape; each is a small file
that names its cluster actions.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from harness.capabilities import PROCESSES
from harness.cluster_view import ClusterView
from harness.plugin_api import declared_roles
from harness.process_spec import CONTROL
from harness.protocols import FaultSpec
from harness.targets import FOLLOWER, LEADER_AND_CONTROL, PROCESS_TARGETS, choose_nodes

Action = Callable[[ClusterView, str], Awaitable[None]]


class ProcessFault:
    """Apply ``do`` to the chosen nodes at the start of a window and ``undo`` to them at its end.

    Args:
        name: the package name (``start-NAME`` / ``stop-NAME`` in the history).
        color: the plot shading colour.
        do: what to do to a node, e.g. kill it.
        undo: how to reverse it, e.g. start it.
        did: the past tense recorded in the history (``killed``), and ``undone`` likewise (``started``).
    """

    needs = frozenset({PROCESSES})
    generic = True
    """A fault of any system, not aimed at one protocol window: the default campaign weighs it 1."""
    mix_targets: tuple[str, ...] = (*PROCESS_TARGETS, FOLLOWER, LEADER_AND_CONTROL)
    """The default campaign's targets: also one follower (a node other than the leader, for the classics that
    kill or pause one) and the leader together with the control plane, for a system that has one
    (:meth:`for_system`). Offered to the mix only, so that the recipes' schedules stay as they were."""

    def __init__(self, name: str, color: str, do: Action, undo: Action, did: str, undone: str) -> None:
        self.name = name
        self.color = color
        self._do, self._undo = do, undo
        self._did, self._undone = did, undone
        self._affected: list[str] = []

    def for_system(self, system: object) -> None:
        """Offer the default campaign the leader with the control plane only if ``system`` declares a control
        plane (:func:`harness.plugin_api.declared_roles`)."""
        if CONTROL not in declared_roles(system):
            self.mix_targets = (*PROCESS_TARGETS, FOLLOWER)

    def targets(self) -> Sequence[str]:
        """one, minority, majority, all, or the leader (the recipes' choices; the mix's are :attr:`mix_targets`)."""
        return PROCESS_TARGETS

    async def start(self, cluster: ClusterView, spec: FaultSpec, rng: random.Random) -> dict[str, Any]:
        """Apply the fault to the chosen nodes that run. One that does not (a standby kept stopped, a node
        another fault killed) is left as it is: undoing the fault would otherwise start it (a kill of the
        leader and the control plane once started a standby operator that a race window had stopped; a
        later race window then stopped it as its own, leaving no operator at all)."""
        nodes = await choose_nodes(cluster, spec.target, rng)
        done, idle = [], []
        for node in nodes:
            if not cluster.processes.running(node):
                idle.append(node)
                continue
            self._affected.append(node)
            await self._do(cluster, node)
            done.append(node)
        return {"target": spec.target, self._did: done, **({"not_running": idle} if idle else {})}

    async def stop(self, cluster: ClusterView) -> dict[str, Any]:
        """Undo the fault on every node it reached."""
        undone = []
        while self._affected:
            node = self._affected.pop()
            await self._undo(cluster, node)
            undone.append(node)
        return {self._undone: sorted(undone)}

    async def heal(self, cluster: ClusterView) -> None:
        """Undo anything still in effect."""
        await self.stop(cluster)
