"""After a run: run the checkers over the history, write results.json, render the report."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.checker_protocol import CheckContext, Checker, run_checkers
from harness.history.op import Op
from harness.store import RunDir

if TYPE_CHECKING:
    from harness.config import TestConfig
    from harness.plugin_api import SystemPlugin
    from harness.protocols import Workload


def checkers_for(workload: Workload, system: SystemPlugin, config: TestConfig) -> list[Checker]:
    """The checkers a run of ``config`` gets besides the standard ones: the workload's, then the system's."""
    return [*workload.checkers(), *system.checkers(config)]


def check_run(run: RunDir, checkers: Sequence[Checker], history: Sequence[Op], test: dict[str, Any],
              system: object | None = None) -> dict[str, Any]:
    """Run ``checkers`` (the workload's and the system's) and the installed standard ones
    (:func:`harness.registry.standard_checkers`), ``system`` (the run's plugin) in their context; write and
    return results.json's content."""
    from harness.registry import standard_checkers

    ctx = CheckContext(test=test, run_dir=run.path, system=system)
    results = run_checkers([*checkers, *standard_checkers()], history, ctx)
    if results["valid"] is False:
        from harness.detection import detection

        results["detection"] = detection(results["checkers"], history)
    extra = test.get("extra") or {}
    for field in ("campaign", "case"):  # campaign pages group runs by these
        if extra.get(field):
            results[field] = extra[field]
    run.write_results(results)
    return results


def render_report(run: RunDir) -> Path | None:
    """Render the run's report with every installed reporter (the ``fencepost.reports`` entry points:
    ``(run_dir) -> path``); the first one's path, or None when none is installed."""
    from harness.registry import REPORTS, group

    paths = [Path(ep.load()(run.path)) for _, ep in sorted(group(REPORTS).items())]
    return paths[0] if paths else None
