"""Operator fault: kill the operator and restart it, or run a second operator beside it.

A restarted operator must continue from the metadata store, and two racing operators must never lose
an acknowledged write (only availability): their metadata updates are compare-and-set on a version.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from fencepost import CONTROL, PROCESSES, ClusterView, FaultSpec

TARGETS = ("restart", "race")


class OperatorNemesis:
    """Crash the control plane, or split it in two."""

    name = "operator"
    color = "#3a86ff"
    needs = frozenset({PROCESSES})

    def __init__(self) -> None:
        self._killed: list[str] = []
        self._racing: list[str] = []

    def targets(self) -> Sequence[str]:
        """restart (kill the active operator until the window ends) or race (start a second one)."""
        return TARGETS

    async def start(self, cluster: ClusterView, spec: FaultSpec, rng: random.Random) -> dict[str, Any]:
        """Kill the active operator, or start the standby beside it."""
        ops = cluster.members(CONTROL)
        if spec.target == "race":
            if len(ops) < 2:
                raise RuntimeError("the cluster has no standby operator to race")
            if cluster.processes.running(ops[1]):  # not this window's to stop when it ends
                return {"target": "race", "skipped": f"the standby {ops[1]} already runs"}
            await cluster.processes.start(ops[1])
            self._racing.append(ops[1])
            return {"target": "race", "started": [ops[1]]}
        await cluster.processes.kill(ops[0])
        self._killed.append(ops[0])
        return {"target": "restart", "killed": [ops[0]]}

    async def stop(self, cluster: ClusterView) -> dict[str, Any]:
        """Restart the killed operator; stop the racing one."""
        started, stopped = [], []
        while self._killed:
            name = self._killed.pop()
            await cluster.processes.start(name)
            started.append(name)
        while self._racing:
            name = self._racing.pop()
            await cluster.processes.kill(name)
            stopped.append(name)
        return {"started": started, "stopped": stopped}

    async def heal(self, cluster: ClusterView) -> None:
        """Leave exactly the active operator running, whatever left it otherwise."""
        await self.stop(cluster)
        ops = cluster.members(CONTROL)
        for name in ops[1:]:
            if cluster.processes.running(name):
                await cluster.processes.kill(name)
        if ops and not cluster.processes.running(ops[0]):
            await cluster.processes.start(ops[0])


def package() -> OperatorNemesis:
    """The operator fault package."""
    return OperatorNemesis()
