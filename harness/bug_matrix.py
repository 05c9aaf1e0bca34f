"""The detection matrix: every bug's recommended test over several seeds, with the bug and without it.

Each run lands in the run store as part of one campaign (``results.json`` names the campaign, the case,
and, for an invalid run, which checkers caught it and when: see :mod:`harness.detection`). The
campaign page of the store's index renders the detection table from those runs, so a matrix can be
re-rendered, or extended by another seed, at any time.

A bug counts as detected in a run when the run's verdict is invalid (exit 1). The clean system runs
every recipe without the bug; any invalid or unknown verdict there is a false alarm.

A run that ends in an error (its cluster never became ready, an engine went away) does not end the matrix:
its cell says why, its folder gets a ``results.json`` with the unknown verdict and the error, and the
remaining runs go on. Errored runs count apart, neither as detections nor as alarms, and a matrix with any
does not pass. A refusal (the test asks for something its system cannot do) ends it, as it would end
every run the same way.
"""

from __future__ import annotations

import json
import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.config import TestConfig
from harness.plugin_api import Recipe
from harness.registry import Refused
from harness.store import RunDir, RunStore

CLEAN = "clean"
"""The case name prefix of runs without a bug."""
DEFAULT = "default campaign"
"""What a run of ``--default-campaign`` repeats in place of a bug's recipe."""
DEFAULT_TIME_LIMIT = 120.0
"""The default campaign's seconds of workload per matrix run, unless given."""


@dataclass
class Cell:
    """One run of the matrix.

    Attributes:
        bug: the injected bug, or None for the clean system.
        recipe_of: the bug whose recipe ran (for clean runs, the recipe they repeat).
        seed: the run's seed.
        verdict: True, False or "unknown".
        checkers: the checkers that found the anomaly (invalid runs).
        first_anomaly_s: test seconds until the first evidence of the anomaly, when known.
        run: the run's folder.
        wall_s: wall-clock seconds the whole run took (setup, test, check, report).
        error: why the run ended in an error, in one line ("" when it finished).
    """

    bug: str | None
    recipe_of: str
    seed: int
    verdict: bool | str
    checkers: list[str] = field(default_factory=list)
    first_anomaly_s: float | None = None
    run: str = ""
    wall_s: float = 0.0
    error: str = ""

    @property
    def detected(self) -> bool:
        """The run was invalid."""
        return self.verdict is False


def _recipe_key(bug: str, recipes: Mapping[str, Recipe]) -> str:
    """Bugs whose recipes are the same test share one key (an unknown name is its own key)."""
    return json.dumps(recipes[bug].config_fields(), sort_keys=True) if bug in recipes else bug


def plan(bugs: Sequence[str], seeds: Sequence[int], *, clean: bool = True, with_bugs: bool = True,
         recipes: Mapping[str, Recipe] | None = None) -> list[tuple[str | None, str, int]]:
    """``(bug or None, recipe's bug, seed)`` for every run, bug runs first, in a stable order.

    The clean system runs each distinct recipe once per seed: two bugs with the same recipe (the fsync
    bugs, say) share their clean runs, and a recipe without a clean twin (the mode is its workload) has
    none. ``with_bugs=False`` plans the clean runs alone."""
    runs: list[tuple[str | None, str, int]] = [(b, b, s) for b in bugs for s in seeds] if with_bugs else []
    if clean:
        twins = [b for b in bugs if recipes is None or b not in recipes or recipes[b].clean_twin]
        distinct = list({_recipe_key(b, recipes or {}): b for b in reversed(twins)}.values())[::-1]
        runs += [(None, b, s) for b in distinct for s in seeds]
    return runs


def config_for(bug: str | None, recipe: Recipe, recipe_of: str, seed: int, *, backend: str, campaign: str,
               time_limit: float | None = None, system: str = "",
               options: Mapping[str, Any] | None = None) -> TestConfig:
    """The TestConfig of one matrix run: ``recipe`` (the recipe of bug ``recipe_of``) with ``bug`` or none;
    ``options`` (the system's) over the recipe's own."""
    fields = recipe.config_fields()
    fields["options"] = {**fields.get("options", {}), **(options or {})}
    if time_limit is not None:
        fields["time_limit"] = time_limit
    case = bug if bug is not None else f"{CLEAN} ({recipe_of})"
    extra = {**fields.pop("extra"), "campaign": campaign, "case": case, "matrix": {"bug": bug, "recipe": recipe_of}}
    return TestConfig(**fields, system=system, backend=backend, seed=seed, bug=[bug] if bug else [], extra=extra)


def default_config(bug: str | None, seed: int, *, backend: str, campaign: str, time_limit: float | None = None,
                   system: str = "", workload: str = "register",
                   options: Mapping[str, Any] | None = None) -> TestConfig:
    """The TestConfig of one matrix run of the system's default campaign (no recipe) with ``bug`` or none."""
    from harness.mix import default_campaign

    case = bug if bug is not None else f"{CLEAN} ({DEFAULT})"
    config = TestConfig(system=system, workload=workload, backend=backend, seed=seed, bug=[bug] if bug else [],
                        time_limit=time_limit or DEFAULT_TIME_LIMIT, options=dict(options or {}),
                        extra={"campaign": campaign, "case": case, "matrix": {"bug": bug, "recipe": DEFAULT}})
    return default_campaign(config, frozenset({"time_limit"}))


def run_matrix(bugs: Sequence[str], seeds: Sequence[int], store: str | Path, *, recipes: Mapping[str, Recipe],
               system: str = "", backend: str = "local", clean: bool = True,
               time_limit: float | None = None, campaign: str | None = None,
               on_cell: Callable[[Cell], None] | None = None, with_bugs: bool = True,
               default_workload: str | None = None, options: Mapping[str, Any] | None = None) -> list[Cell]:
    """Run the matrix of ``system``'s bugs (``recipes``: each bug's recipe) one run at a time; call
    ``on_cell`` after each. With ``default_workload``, every run is the system's default campaign on that
    workload instead of a recipe (the clean system once per seed). ``options`` (the system's own) go to
    every run. KeyboardInterrupt propagates."""
    from harness.launch import run_test

    campaign = campaign or time.strftime("matrix-%Y%m%dT%H%M%S", time.gmtime())
    cells = []
    if default_workload is None:
        runs = plan(bugs, seeds, clean=clean, with_bugs=with_bugs, recipes=recipes)
    else:
        runs = [(b, DEFAULT, s) for b in bugs for s in seeds] if with_bugs else []
        runs += [(None, DEFAULT, s) for s in seeds] if clean else []
    for bug, recipe_of, seed in runs:
        if default_workload is None:
            config = config_for(bug, recipes[recipe_of], recipe_of, seed, backend=backend, campaign=campaign,
                                time_limit=time_limit, system=system, options=options)
        else:
            config = default_config(bug, seed, backend=backend, campaign=campaign, time_limit=time_limit,
                                    system=system, workload=default_workload, options=options)
        started, before = time.monotonic(), RunStore(store).latest()
        try:
            outcome = run_test(config, store)
        except Refused:
            raise
        except Exception as e:  # one run's error is recorded, and the matrix goes on
            run = RunStore(store).latest()
            cell = _errored(bug, recipe_of, seed, run if run != before else None, e,
                            round(time.monotonic() - started, 1))
        else:
            found = outcome.results.get("detection") or {}
            cell = Cell(bug, recipe_of, seed, outcome.valid, list(found.get("checkers", [])),
                        found.get("first_anomaly_s"), str(outcome.run.path), round(time.monotonic() - started, 1))
        cells.append(cell)
        if on_cell is not None:
            on_cell(cell)
    return cells


def _errored(bug: str | None, recipe_of: str, seed: int, run: RunDir | None, error: Exception,
             wall_s: float) -> Cell:
    """The cell of a run that raised ``error``; its folder (None when it failed before it made one) gets a
    ``results.json`` saying so, unless the run got as far as writing its own."""
    lines = str(error).strip().splitlines()
    why = f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__
    if run is not None and run.read_results() is None:
        extra = run.read_config().get("extra", {})
        run.write_results({"valid": "unknown", "error": why, "checkers": {}, "campaign": extra.get("campaign"),
                           "case": extra.get("case")})
    return Cell(bug, recipe_of, seed, "unknown", run=str(run.path) if run is not None else "", wall_s=wall_s,
                error=why)


@dataclass
class Row:
    """One bug's line of the matrix (or the clean system's, with ``bug`` None)."""

    bug: str | None
    runs: int
    detected: int
    median_s: float | None
    catching: list[tuple[str, int]]
    errored: int = 0

    @property
    def finished(self) -> int:
        """The runs that did not end in an error (an errored run tested nothing)."""
        return self.runs - self.errored

    @property
    def rate(self) -> float:
        """Detected runs over the runs that finished."""
        return self.detected / self.finished if self.finished else 0.0

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {"bug": self.bug, "runs": self.runs, "detected": self.detected, "rate": round(self.rate, 3),
                "median_time_to_detection_s": self.median_s, "catching": dict(self.catching),
                "errored": self.errored}


def summarize(cells: Iterable[Cell]) -> list[Row]:
    """One row per bug in first-seen order, then one for the clean system (its ``detected`` are alarms)."""
    by_bug: dict[str | None, list[Cell]] = {}
    for c in cells:
        by_bug.setdefault(c.bug, []).append(c)
    rows = []
    for bug, group in sorted(by_bug.items(), key=lambda kv: kv[0] is None):
        found = [c for c in group if not c.error and (c.detected if bug is not None else c.verdict is not True)]
        times = [c.first_anomaly_s for c in found if c.first_anomaly_s is not None]
        catching = Counter(name for c in found for name in c.checkers).most_common()
        rows.append(Row(bug, len(group), len(found), round(statistics.median(times), 1) if times else None,
                        catching, sum(1 for c in group if c.error)))
    return rows


def passed(rows: Sequence[Row], min_rate: float = 0.9) -> bool:
    """Every bug detected in at least ``min_rate`` of its runs, no alarm on the clean system, and no run
    ended in an error."""
    return all(r.errored == 0 and ((r.rate >= min_rate) if r.bug is not None else r.detected == 0) for r in rows)
