"""Run the nemesis schedule: start and stop each fault on time, recording both as nemesis ops."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Mapping, Sequence
from typing import Any

from harness.cluster import Cluster
from harness.history.op import NEMESIS, OpType
from harness.protocols import Nemesis
from harness.recorder import Recorder
from harness.schedule import ScheduledFault
from harness.workers import Tally


async def _act(recorder: Recorder, f: str, value: Any, action: Any) -> None:
    recorder.record(NEMESIS, OpType.INVOKE, f, value=value)
    try:
        desc = await action
        recorder.record(NEMESIS, OpType.INFO, f, value=desc)
    except Exception as e:  # a fault that fails to apply is recorded, never fatal
        recorder.record(NEMESIS, OpType.INFO, f, value=value, error=f"{type(e).__name__}: {e}")


async def run_schedule(
    schedule: Sequence[ScheduledFault], packages: Mapping[str, Nemesis], cluster: Cluster,
    recorder: Recorder, started: float, tally: Tally,
) -> None:
    """Apply every fault window of ``schedule``; ``started`` is the test's monotonic start time.

    Cancelled (at the time limit), it stops the fault in progress before returning.
    """
    for window in schedule:
        package = packages[window.spec.package]
        await asyncio.sleep(max(0.0, started + window.at - time.monotonic()))
        rng = random.Random(window.seed)
        spec_desc = {"target": window.spec.target, **dict(window.spec.params)}
        await _act(recorder, f"start-{package.name}", spec_desc, package.start(cluster, window.spec, rng))
        tally.active_faults.add(package.name)
        try:
            await asyncio.sleep(max(0.0, started + window.at + window.duration - time.monotonic()))
        finally:
            await asyncio.shield(_act(recorder, f"stop-{package.name}", None, package.stop(cluster)))
            tally.active_faults.discard(package.name)
