"""Run one test end to end into the run store: the shared core of ``fencepost test`` and the pytest plugin."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.config import TestConfig
from harness.runtime import Progress
from harness.store import RunDir, RunStore


@dataclass
class RunOutcome:
    """What a finished run produced.

    Attributes:
        run: the run's folder.
        results: results.json's content (``valid`` and each checker's result).
        report: the HTML report, if one was rendered.
        ok_ops: how many operations completed ok.
    """

    run: RunDir
    results: dict[str, Any]
    report: Path | None
    ok_ops: int

    @property
    def valid(self) -> bool | str:
        """The merged verdict: True, False or "unknown"."""
        verdict: bool | str = self.results["valid"]
        return verdict


def backend_for(config: TestConfig) -> Any:
    """The backend named by the config."""
    if config.backend == "local":
        from harness.backends.local import LocalBackend

        return LocalBackend()
    if config.backend == "docker":
        from harness.backends.docker import DockerBackend

        return DockerBackend()
    raise ValueError(f"backend {config.backend!r} is not available yet")


def run_test(config: TestConfig, store: str | Path, *, progress: Progress | None = None) -> RunOutcome:
    """Set up, run, heal, tear down, check and report ``config``; KeyboardInterrupt propagates after teardown."""
    from harness.checking import check_run, render_report
    from harness.logs import run_logging
    from harness.runtime import execute
    from nemesis import registry as nemeses
    from workloads import registry as workloads

    run = RunStore(store).create_run(config.name, config.to_dict())
    workload = workloads.load(config.workload, config)
    packages = {name: nemeses.load(name) for name in config.nemesis}
    with run_logging(run.log_path):
        try:
            history = asyncio.run(execute(config, backend_for(config), workload, packages, run, progress=progress))
        except asyncio.CancelledError:  # SIGTERM cancels the test as Ctrl-C does; both end as an interruption
            raise KeyboardInterrupt from None
        results = check_run(run, workload, history, config.to_dict())
        report = render_report(run)
    ok_ops = sum(1 for op in history if op.type.value == "ok" and op.process != "nemesis")
    return RunOutcome(run, results, report, ok_ops)
