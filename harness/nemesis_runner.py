"""Run the nemesis schedule: start and stop each fault on time, recording both as nemesis ops."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Mapping, Sequence
from typing import Any

from harness.client_workers import Tally
from harness.cluster_view import ClusterView
from harness.history.op import NEMESIS, OpType
from harness.protocols import Nemesis
from harness.recorder import Recorder
from harness.schedule import ScheduledFault
from harness.shared_network import acting_for
from harness.transitions import wait_for

TRIGGER_PATIENCE = 0.5
"""The share of its window a triggered fault waits for its transition before striking anyway."""


async def _act(recorder: Recorder, f: str, value: Any, action: Any) -> None:
    # Lanes act at once (an aimed fault's start may take many seconds); the history pairs the nemesis's
    # ops by function (harness.history.pairing), and a package is never in two actions at once.
    recorder.record(NEMESIS, OpType.INVOKE, f, value=value)
    try:
        desc = await action
        recorder.record(NEMESIS, OpType.INFO, f, value=desc)
    except Exception as e:  # a fault that fails to apply is recorded, never fatal
        recorder.record(NEMESIS, OpType.INFO, f, value=value, error=f"{type(e).__name__}: {e}")
    except asyncio.CancelledError:  # the time limit (or Ctrl-C) came mid-action: its end is unknown, recorded
        recorder.record(NEMESIS, OpType.INFO, f, value=value, error="cancelled: the run ended while it acted")
        raise


async def run_schedule(
    schedule: Sequence[ScheduledFault], packages: Mapping[str, Nemesis], cluster: ClusterView,
    recorder: Recorder, started: float, tally: Tally, *, keep_time: bool = False,
) -> None:
    """Apply every fault window of ``schedule``; ``started`` is the test's monotonic start time.

    Each lane's windows run in order, the lanes side by side; a package is in one window at a time. A
    window with a trigger first waits for that transition (at most :data:`TRIGGER_PATIENCE` of the
    window; then it strikes anyway, for what is left of it).

    With ``keep_time`` (the default campaign) every window starts at the time its seed planned, even while
    an earlier window of its lane is still starting: an aimed fault's start may wait many seconds (for the
    damage guard's turn, a copy, an election), and in order the lane's later windows would all start that
    much late, the last ones never. Windows of one package still run one at a time. Cancelled
    (at the time limit), it stops the faults in progress before returning; a start still acting then is
    completed in the history as ``info`` with the error ``cancelled: ...``, and the run's final heal
    clears whatever it had put in force.
    """
    lanes: dict[int, list[ScheduledFault]] = {}
    for window in schedule:
        lanes.setdefault(window.lane, []).append(window)
    locks = {name: asyncio.Lock() for name in packages}
    if keep_time:
        tasks = [asyncio.create_task(_run_lane([w], packages, locks, cluster, recorder, started, tally, first=i))
                 for _, ws in sorted(lanes.items()) for i, w in enumerate(ws)]
    else:
        tasks = [asyncio.create_task(_run_lane(ws, packages, locks, cluster, recorder, started, tally))
                 for _, ws in sorted(lanes.items())]
    try:
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def _run_lane(windows: Sequence[ScheduledFault], packages: Mapping[str, Nemesis],
                    locks: Mapping[str, asyncio.Lock], cluster: ClusterView, recorder: Recorder, started: float,
                    tally: Tally, first: int = 0) -> None:
    for i, window in enumerate(windows, start=first):
        with acting_for(f"lane {window.lane} window {i}"):  # its network cut composes with other lanes'
            await _run_window(window, packages, locks, cluster, recorder, started, tally)


async def _run_window(window: ScheduledFault, packages: Mapping[str, Nemesis], locks: Mapping[str, asyncio.Lock],
                      cluster: ClusterView, recorder: Recorder, started: float, tally: Tally) -> None:
    package = packages[window.spec.package]
    end = started + window.at + window.duration
    await asyncio.sleep(max(0.0, started + window.at - time.monotonic()))
    spec_desc: dict[str, Any] = {"target": window.spec.target, **dict(window.spec.params)}
    if window.classic is not None:  # the history says which classic struck (the report lists them)
        spec_desc["classic"] = window.classic
    if window.trigger is not None:  # wait for it for half the window at most, then strike anyway
        waited = await wait_for(cluster, window.trigger, max(0.0, TRIGGER_PATIENCE * window.duration))
        spec_desc |= {"trigger": window.trigger, "triggered_after_s": waited}
    contended = locks[window.spec.package].locked()
    async with locks[window.spec.package]:
        if contended and time.monotonic() >= end:
            return  # its package was busy in another lane until this window's time was over
        rng = random.Random(window.seed)
        await _act(recorder, f"start-{package.name}", spec_desc, package.start(cluster, window.spec, rng))
        tally.active_faults.add(package.name)
        try:
            await asyncio.sleep(max(0.0, end - time.monotonic()))
        finally:
            await asyncio.shield(_act(recorder, f"stop-{package.name}", None, package.stop(cluster)))
            tally.active_faults.discard(package.name)
