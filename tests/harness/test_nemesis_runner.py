"""The nemesis runner: a start cut short by the end of the run still gets its completion in the history."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.client_workers import Tally
from harness.cluster import Cluster
from harness.cluster_view import ClusterView
from harness.config import TestConfig
from harness.history.op import NEMESIS, OpType
from harness.nemesis_runner import run_schedule
from harness.protocols import FaultSpec, Nemesis
from harness.recorder import Recorder
from harness.schedule import ScheduledFault
from harness.testing import FakeSystem, MemoryBackend


class SlowStart:
    """A fault package whose start takes longer than any run gives it (like a deposed leader's long hold)."""

    name = "slow-start"
    color = "#000000"
    needs: frozenset[str] = frozenset()

    def __init__(self) -> None:
        self.stops = 0

    def targets(self) -> Sequence[str]:
        return ("default",)

    async def start(self, cluster: ClusterView, spec: FaultSpec, rng: random.Random) -> dict[str, Any]:
        await asyncio.sleep(60)
        return {}

    async def stop(self, cluster: ClusterView) -> dict[str, Any]:
        self.stops += 1
        return {}

    async def heal(self, cluster: ClusterView) -> None:
        pass


def _run_then_cancel(tmp_path: Path, schedule: Sequence[ScheduledFault], packages: Mapping[str, Nemesis],
                     started: float, after_s: float, keep_time: bool = False) -> Recorder:
    """Run ``schedule`` on a fake three-node cluster, cancel it ``after_s`` seconds in (the run's time limit),
    and return its (closed) recorder."""
    cluster = Cluster(TestConfig(nodes=3), FakeSystem(), MemoryBackend())
    recorder = Recorder(tmp_path / "history.jsonl")

    async def scenario() -> None:
        await cluster.start(tmp_path)
        task = asyncio.create_task(run_schedule(schedule, packages, cluster, recorder, started, Tally(),
                                                keep_time=keep_time))
        await asyncio.sleep(after_s)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    try:
        asyncio.run(scenario())
    finally:
        recorder.close()
    return recorder


def test_a_start_cancelled_at_the_time_limit_is_completed_as_info_and_the_history_stays_paired(
        tmp_path: Path) -> None:
    package = SlowStart()
    schedule = [ScheduledFault(0.0, 30.0, FaultSpec("slow-start", "default"), seed=1)]
    # the run's time limit comes while the start is still acting
    recorder = _run_then_cancel(tmp_path, schedule, {"slow-start": package}, time.monotonic(), 0.3)
    ops = [(op.type, op.f, op.error) for op in recorder.ops if op.process == NEMESIS]
    assert ops == [(OpType.INVOKE, "start-slow-start", None),
                   (OpType.INFO, "start-slow-start", "cancelled: the run ended while it acted")]
    assert package.stops == 0  # never started, never stopped: the run's final heal clears what it left


class Quick:
    """A fault package that notes when each start came."""

    name = "quick"
    color = "#000000"
    needs: frozenset[str] = frozenset()

    def __init__(self) -> None:
        self.started_at: list[float] = []

    def targets(self) -> Sequence[str]:
        return ("default",)

    async def start(self, cluster: ClusterView, spec: FaultSpec, rng: random.Random) -> dict[str, Any]:
        self.started_at.append(time.monotonic())
        return {}

    async def stop(self, cluster: ClusterView) -> dict[str, Any]:
        return {}

    async def heal(self, cluster: ClusterView) -> None:
        pass


def _starts_while_a_slow_start_holds_its_lane(tmp_path: Path, keep_time: bool) -> list[float]:
    """Lane 0: a start that takes a minute at 0 s, then a quick window at 0.2 s; lane 1: a quick window at
    0.3 s. Return when the quick windows started, in seconds from the test's start."""
    tmp_path.mkdir()
    slow, quick = SlowStart(), Quick()
    schedule = [ScheduledFault(0.0, 0.1, FaultSpec("slow-start", "default"), seed=1, lane=0),
                ScheduledFault(0.2, 0.1, FaultSpec("quick", "default"), seed=2, lane=0),
                ScheduledFault(0.3, 0.1, FaultSpec("quick", "default"), seed=3, lane=1)]
    started = time.monotonic()
    _run_then_cancel(tmp_path, schedule, {"slow-start": slow, "quick": quick}, started, 1.0, keep_time)
    return [round(t - started, 1) for t in quick.started_at]


def test_the_default_campaign_starts_each_window_on_time_while_an_earlier_one_of_its_lane_still_starts(
        tmp_path: Path) -> None:
    # In order (a recipe's single lane), lane 0's second window waits for the slow start; the other lane's
    # window is on time. Keeping time, both are.
    assert _starts_while_a_slow_start_holds_its_lane(tmp_path / "in-order", keep_time=False) == [0.3]
    assert _starts_while_a_slow_start_holds_its_lane(tmp_path / "on-time", keep_time=True) == [0.2, 0.3]
