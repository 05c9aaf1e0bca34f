"""A test's lifecycle, as in Jepsen: set up, run clients and faults, heal, recover, read, tear down.

Teardown always runs: on success, on an exception, on Ctrl-C (asyncio cancels the main task) and on
SIGTERM (which this module turns into the same cancellation).
"""

from __future__ import annotations

import asyncio
import json
import random
import signal
import time
from collections.abc import Callable, Mapping
from contextlib import suppress

from harness.backends.backend import Backend
from harness.client_workers import Tally, client_worker, invoke_and_record
from harness.cluster import Cluster
from harness.config import TestConfig
from harness.generator import RateLimiter
from harness.history.op import FINAL_PROCESS_BASE, Op
from harness.plugin_api import Collects, SystemPlugin
from harness.protocols import Client, Invocation, Nemesis, Workload
from harness.recorder import Recorder
from harness.registry import needs_of
from harness.schedule import ScheduledFault, nemesis_schedule
from harness.store import RunDir

FINAL_PATIENCE_S = 30.0
"""How long, from the start of the final phase, a final read that does not succeed is tried again (each
is tried at least once): the time a system has to serve again after the faults healed and the recovery
pause (checkers.recovery judges it)."""
FINAL_RETRY_S = 1.0
"""The pause after a final read that was refused."""
FINAL_SPREAD = 16
"""Once the patience is spent, the final reads not tried yet are tried once each, this many at a time, each
from a new process: on a cluster that no longer serves, one after another they took up to 650 s."""

Progress = Callable[[Tally, float, float], None]
"""Called about twice a second with (tally, seconds elapsed, seconds in the main phase)."""


def schedule_for(config: TestConfig, packages: Mapping[str, Nemesis]) -> list[ScheduledFault]:
    """The test's nemesis schedule, from its seed.

    ``config.extra["targets"]`` (``{package: [target, ...]}``) narrows a package's target choices, as a
    bug's recipe does to aim at the window the bug needs; unknown targets are a ValueError. A default
    campaign (``config.extra["mix"]``) gets the overlapping, weighted, aimed schedule of :mod:`harness.mix`,
    the classics ``config.extra["classics"]`` offers first, its other windows waiting for the transitions
    ``config.extra["triggers"]`` names.
    """
    if config.extra.get("mix"):
        from harness.classics import from_extra
        from harness.mix import mixed_schedule

        return mixed_schedule(config.seed, packages, config.time_limit, config.nemesis_interval,
                              triggers=list(config.extra.get("triggers") or []), classics=from_extra(config.extra))
    targets = {name: list(pkg.targets()) for name, pkg in packages.items()}
    for name, wanted in dict(config.extra.get("targets") or {}).items():
        unknown = sorted(set(wanted) - set(targets.get(name, [])))
        if name not in targets or unknown:
            raise ValueError(f"targets for {name}: {', '.join(unknown) or 'the package is not in the test'} "
                             f"not among {', '.join(targets.get(name, [])) or 'its packages'}")
        targets[name] = list(wanted)
    return nemesis_schedule(config.seed, targets, config.time_limit, config.nemesis_interval)


def fault_styles(packages: Mapping[str, Nemesis]) -> dict[str, dict[str, str]]:
    """``{fault: {"color": ...}}`` for every package, as ``faults.json`` records them for the report."""
    return {pkg.name: {"color": pkg.color} for pkg in packages.values() if isinstance(getattr(pkg, "color", None), str)}


async def _progress_loop(progress: Progress, tally: Tally, started: float, total: float) -> None:
    while True:
        progress(tally, time.monotonic() - started, total)
        await asyncio.sleep(0.5)


READY_TIMEOUT_S = 60.0
"""How long the system may take to serve after its processes listen."""


async def execute(
    config: TestConfig, system: SystemPlugin, backend: Backend, workload: Workload,
    packages: Mapping[str, Nemesis], run: RunDir, *, progress: Progress | None = None, op_timeout: float = 5.0,
) -> list[Op]:
    """Run the test of ``system`` on ``backend`` and return its history (also written to the run dir).

    Steps: set up the cluster; start the client workers and the nemesis; run until the time limit;
    heal every fault; let the system recover; run the final reads; collect logs and dumps; tear down.
    """
    main_task = asyncio.current_task()
    loop = asyncio.get_running_loop()
    with suppress(NotImplementedError, RuntimeError):
        if main_task is not None:
            loop.add_signal_handler(signal.SIGTERM, main_task.cancel)
    recorder = Recorder(run.history_path)
    # History times are ns since this moment; node event logs use wall-clock seconds.
    (run.path / "timing.json").write_text(json.dumps({"start_wall_s": time.time() - recorder.elapsed_ns() / 1e9})
                                          + "\n")
    tally = Tally()
    schedule = schedule_for(config, packages)
    (run.path / "schedule.json").write_text(json.dumps([w.to_dict() for w in schedule], indent=1) + "\n")
    # Each package's colour, so that a stored run renders in its own colours without the fault code.
    (run.path / "faults.json").write_text(json.dumps(fault_styles(packages), indent=1) + "\n")
    side_tasks: list[asyncio.Task[None]] = []
    cluster = Cluster(config, system, backend)
    try:
        await cluster.start(run.path, needs_of(packages.values()), READY_TIMEOUT_S)
        rng = random.Random(f"fencepost-workload:{config.seed}")
        source = workload.generator(rng, config.concurrency)
        limiter = RateLimiter(config.rate)
        started = time.monotonic()
        deadline = started + config.time_limit
        if progress is not None:
            side_tasks.append(asyncio.create_task(_progress_loop(progress, tally, started, config.time_limit)))
        from harness.nemesis_runner import run_schedule

        nemesis_task = asyncio.create_task(run_schedule(schedule, packages, cluster, recorder, started, tally,
                                                        keep_time=bool(config.extra.get("mix"))))
        side_tasks.append(nemesis_task)
        def make_client() -> Client:
            return system.client(workload, cluster)

        workers = [
            asyncio.create_task(client_worker(w, config.concurrency, make_client, source, cluster, recorder,
                                              limiter, deadline, op_timeout, tally))
            for w in range(config.concurrency)
        ]
        try:
            await asyncio.gather(*workers)
        finally:
            for w in workers:
                w.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
        if not nemesis_task.done():
            nemesis_task.cancel()
        with suppress(asyncio.CancelledError):
            await nemesis_task
        if main_task is not None and main_task.cancelling():
            raise asyncio.CancelledError  # Ctrl-C or SIGTERM arrived while waiting for the nemesis: not swallowed
        await cluster.heal_everything(packages)
        await asyncio.sleep(config.recovery)
        await _final_reads(make_client, workload, cluster, recorder, op_timeout, tally)
        await backend.collect(run.path)
        if isinstance(system, Collects):
            await system.collect(cluster, run.path)
    finally:
        for task in side_tasks:
            task.cancel()
        await asyncio.gather(*side_tasks, return_exceptions=True)
        try:
            await asyncio.shield(_heal_and_teardown(cluster, packages))
        finally:
            recorder.close()
    return recorder.ops


async def _heal_and_teardown(cluster: Cluster, packages: Mapping[str, Nemesis]) -> None:
    try:
        if cluster.specs:  # set up: there is something to heal
            with suppress(Exception):
                await asyncio.wait_for(cluster.heal_everything(packages), 30)
    finally:
        await cluster.backend.teardown()


async def _final_reads(make_client: Callable[[], Client], workload: Workload, cluster: Cluster, recorder: Recorder,
                       op_timeout: float, tally: Tally) -> None:
    final_ops = workload.final_ops()
    if not final_ops:
        return
    process = FINAL_PROCESS_BASE
    holder = [make_client()]
    await holder[0].open(cluster)
    deadline = time.monotonic() + FINAL_PATIENCE_S
    tried = 0
    try:
        for op in final_ops:
            if time.monotonic() >= deadline:
                break
            tried += 1
            while True:  # a final read that does not succeed is tried again until the patience is spent
                outcome = await invoke_and_record(holder, process, op, recorder, op_timeout, tally)
                if outcome.type == "info":  # timed out: the next op, this one again or the next, comes from a
                    process += 1  # new process with a new client, even once the patience is spent
                    await holder[0].close()
                    holder[0] = make_client()
                    await holder[0].open(cluster)
                if outcome.type == "ok" or time.monotonic() >= deadline:
                    break
                if outcome.type == "fail":  # refused (no leader yet, say): the process may ask again
                    await asyncio.sleep(FINAL_RETRY_S)
    finally:
        await holder[0].close()
    await _last_tries(make_client, final_ops[tried:], process + 1, cluster, recorder, op_timeout, tally)


async def _last_tries(make_client: Callable[[], Client], ops: list[Invocation], first_process: int, cluster: Cluster,
                      recorder: Recorder, op_timeout: float, tally: Tally) -> None:
    """Try each of ``ops`` once, each from a process of its own: one key's ops in their order (the register's
    read must come before its write), :data:`FINAL_SPREAD` keys at a time."""
    spread = asyncio.Semaphore(FINAL_SPREAD)
    by_key: dict[str, list[tuple[int, Invocation]]] = {}
    for i, op in enumerate(ops):
        by_key.setdefault(json.dumps(op.key, sort_keys=True, default=str), []).append((first_process + i, op))

    async def in_order(chain: list[tuple[int, Invocation]]) -> None:
        async with spread:
            for process, op in chain:
                holder = [make_client()]
                try:
                    await holder[0].open(cluster)
                    await invoke_and_record(holder, process, op, recorder, op_timeout, tally)
                finally:
                    await holder[0].close()

    await asyncio.gather(*(in_order(chain) for chain in by_key.values()))
