"""Run one test end to end into the run store: the shared core of ``fencepost test`` and the pytest plugin."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import registry
from harness.backends.backend import Backend
from harness.cluster import offered
from harness.config import TestConfig
from harness.lifecycle import Progress
from harness.plugin_api import Preflight, SystemPlugin
from harness.protocols import Nemesis, Workload
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


@dataclass
class Prepared:
    """A test resolved against the installed plugins, before anything starts.

    Attributes:
        system: the system under test (a fresh plugin instance for this run).
        backend: where its processes run.
        workload: the workload.
        packages: the fault packages by name.
    """

    system: SystemPlugin
    backend: Backend
    workload: Workload
    packages: dict[str, Nemesis]


def prepare(config: TestConfig, *, system: SystemPlugin | None = None, backend: Backend | None = None) -> Prepared:
    """Resolve ``config``'s system, backend, workload and faults, and refuse (one line, before anything
    starts) what the run cannot do. ``system`` and ``backend`` replace the installed ones named in the
    config (tests pass :mod:`harness.testing`'s fake system and memory backend this way).

    Raises:
        registry.Refused: an unknown name or system option, an unsupported workload, or a fault needing a
            missing capability.
    """
    system = system if system is not None else registry.load_system(config.system)
    backend = backend if backend is not None else registry.load_backend(config.backend)
    workload = registry.load_workload(config.workload, config)
    config.options = registry.resolve_options(system, config.options, workload)
    packages = {name: registry.load_nemesis(name, system) for name in config.nemesis}
    registry.refuse_unsupported(system, offered(system, backend), packages, workload, backend.unavailable)
    if isinstance(system, Preflight):
        reason = system.unavailable(backend.name)
        if reason is not None:
            raise registry.Refused(f"system {system.name} cannot run on the {backend.name} backend here: {reason}")
    return Prepared(system, backend, workload, packages)


def run_test(config: TestConfig, store: str | Path, *, progress: Progress | None = None,
             prepared: Prepared | None = None) -> RunOutcome:
    """Set up, run, heal, tear down, check and report ``config`` (``prepared``: what :func:`prepare` gave,
    else it is called); KeyboardInterrupt propagates after teardown.

    Raises:
        registry.Refused: the test asks for something its run cannot do (nothing was started).
    """
    from harness.after_run import check_run, checkers_for, render_report
    from harness.lifecycle import execute
    from harness.logs import run_logging

    p = prepared if prepared is not None else prepare(config)
    run = RunStore(store).create_run(config.name, config.to_dict())
    with run_logging(run.log_path):
        try:
            history = asyncio.run(execute(config, p.system, p.backend, p.workload, p.packages, run,
                                          progress=progress))
        except asyncio.CancelledError:  # SIGTERM cancels the test as Ctrl-C does; both end as an interruption
            raise KeyboardInterrupt from None
        results = check_run(run, checkers_for(p.workload, p.system, config), history, config.to_dict(),
                            system=p.system)
        report = render_report(run)
    ok_ops = sum(1 for op in history if op.type.value == "ok" and op.process != "nemesis")
    return RunOutcome(run, results, report, ok_ops)
