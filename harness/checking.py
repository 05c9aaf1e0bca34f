"""After a run: pick the checkers, run them over the history, write results.json, render the report."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.checker import CheckContext, Checker, run_checkers
from harness.history.op import Op
from harness.protocols import Workload
from harness.store import RunDir

STANDARD_CHECKERS = (
    "checkers.stats:StatsChecker",
    "checkers.exceptions:ExceptionsChecker",
    "checkers.perf:PerfChecker",
    "checkers.availability:AvailabilityChecker",
    "checkers.log_pattern:LogPatternChecker",
    "checkers.amnesia:AmnesiaChecker",
    "checkers.config_cas:ConfigCasChecker",
    "checkers.redundancy:RedundancyChecker",
    "checkers.commit_epoch:CommitEpochChecker",
    "checkers.topology_guards:TopologyGuardsChecker",
    "checkers.leader_completeness:LeaderCompletenessChecker",
)
"""Checkers every run gets besides its workload's own, as "module:class" (skipped until they exist)."""


def standard_checkers() -> list[Checker]:
    """The history-only checkers every run gets, those that are installed."""
    found: list[Checker] = []
    for target in STANDARD_CHECKERS:
        module_name, cls = target.split(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as e:
            if e.name == module_name:
                continue
            raise
        factory = getattr(module, cls, None)
        if factory is not None:
            found.append(factory())
    return found


def check_run(run: RunDir, workload: Workload, history: Sequence[Op], test: dict[str, Any]) -> dict[str, Any]:
    """Run the workload's checkers and the standard ones; write and return results.json's content."""
    ctx = CheckContext(test=test, run_dir=run.path)
    results = run_checkers([*workload.checkers(), *standard_checkers()], history, ctx)
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
    """Render report.html if the report package is installed; return its path."""
    try:
        module = importlib.import_module("reports.render")
    except ModuleNotFoundError:
        return None
    return Path(module.write_report(run.path))
