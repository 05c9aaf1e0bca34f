"""The control plane after overlapping faults, on a real local cluster: every window leaves the operators as it
found them, and the heal leaves exactly the active one running.

The clean default campaign at seed 4 (27b9a8d, 120 s) ended with no operator at all: a kill of the leader and
the control plane started the standby operator that a race window had stopped; a stalled swap's call, once the
active operator exited at its crash point as asked, went on to that standby, which refused it, so the fault
skipped and never started the active one again; a later race window then stopped the standby as its own.
"""

from __future__ import annotations

import asyncio
import random
import time
from pathlib import Path

import pytest

from harness.cluster_view import ClusterView
from harness.plugin_api import CONTROL
from harness.protocols import FaultSpec
from system.admin import call
from system.wire import ConnectionLost, RpcError, Unreachable
from tests.plugins.reference.cluster_kit import load_fault, reference_cluster, routed, whole

pytestmark = pytest.mark.slow


def _running(cluster: ClusterView) -> list[str]:
    return [o for o in cluster.members(CONTROL) if cluster.processes.running(o)]


async def _answers(cluster: ClusterView, name: str, limit_s: float) -> None:
    """Wait until operator ``name`` answers a status call."""
    host, port = cluster.address(name)
    deadline = time.monotonic() + limit_s
    while True:
        try:
            await call(host, int(port), "status", {}, timeout=2.0)
            return
        except (OSError, TimeoutError, RpcError, ConnectionLost, Unreachable):
            assert time.monotonic() < deadline, f"{name} never answered"
            await asyncio.sleep(0.3)


def test_a_kill_of_the_control_plane_leaves_a_stopped_standby_stopped_and_the_heal_leaves_one_operator(
        tmp_path: Path) -> None:
    async def scenario() -> None:
        async with reference_cluster(tmp_path, nodes=3, tablets=1, nemesis=["kill", "operator"]) as cluster:
            await whole(cluster, set(), 60)
            op1, op2 = cluster.members(CONTROL)
            assert _running(cluster) == [op1]
            kill = load_fault("kill")
            done = await kill.start(cluster, FaultSpec("kill", "leader+control"), random.Random(1))
            assert done["not_running"] == [op2] and op1 in done["killed"], done
            await kill.stop(cluster)
            assert _running(cluster) == [op1], "old code: the kill's end started the standby"

            operator = load_fault("operator")
            await cluster.processes.start(op2)  # as another fault might have
            done = await operator.start(cluster, FaultSpec("operator", "race"), random.Random(1))
            assert "skipped" in done, done
            await operator.stop(cluster)
            assert _running(cluster) == [op1, op2], "a race window stops only the standby it started"
            await cluster.processes.kill(op1)
            await operator.heal(cluster)
            assert _running(cluster) == [op1]
            await routed(cluster, 0, 30)

    asyncio.run(scenario())


def test_a_stalled_swap_asks_the_active_operator_alone_and_starts_it_again(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with reference_cluster(tmp_path, nodes=4, tablets=1, nemesis=["stalled-swap", "operator"]) as cluster:
            await whole(cluster, set(), 60)
            op1, op2 = cluster.members(CONTROL)
            await cluster.processes.start(op2)  # a standby racing beside it, as another fault may leave one
            await _answers(cluster, op2, 30)
            pkg = load_fault("stalled-swap")
            done = await pkg.start(cluster, FaultSpec("stalled-swap", "leader-with-new-node"), random.Random(2))
            assert "skipped" not in done and "refused" not in done, done
            assert not cluster.processes.running(op1) or "partitioned" in done
            await pkg.stop(cluster)
            assert cluster.processes.running(op1), "old code: the call went on to the standby, and op1 stayed down"
            await cluster.processes.kill(op2)
            await routed(cluster, 0, 60)

    asyncio.run(scenario())
