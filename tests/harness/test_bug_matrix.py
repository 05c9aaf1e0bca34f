"""The matrix's plan and its summary rows."""

from __future__ import annotations

from pathlib import Path

import pytest
from fencepost_reference.recipes import RECIPES

from harness.bug_matrix import CLEAN, Cell, config_for, passed, plan, run_matrix, summarize
from harness.plugin_api import Recipe
from harness.store import RunDir


def test_the_plan_runs_every_bug_then_its_clean_twin() -> None:
    assert plan(["a", "b"], [1, 2], recipes=RECIPES) == [("a", "a", 1), ("a", "a", 2), ("b", "b", 1), ("b", "b", 2),
                                        (None, "a", 1), (None, "a", 2), (None, "b", 1), (None, "b", 2)]
    assert plan(["a"], [5], clean=False, recipes=RECIPES) == [("a", "a", 5)]


def test_bugs_with_the_same_recipe_share_their_clean_runs() -> None:
    fsync = ["ack-before-fsync", "metadata-no-fsync"]
    assert RECIPES[fsync[0]].config_fields() == RECIPES[fsync[1]].config_fields()
    runs = plan([*fsync, "no-uuid-check"], [1], recipes=RECIPES)
    assert [r for r in runs if r[0] is None] == [(None, "ack-before-fsync", 1), (None, "no-uuid-check", 1)]
    assert plan([*fsync, "no-uuid-check"], [1], with_bugs=False, recipes=RECIPES) == [r for r in runs if r[0] is None]


def test_a_config_carries_the_recipe_seed_bug_and_campaign() -> None:
    c = config_for("gap-ack", RECIPES["gap-ack"], "gap-ack", 7, backend="local", campaign="m1")
    assert c.bug == ["gap-ack"] and c.seed == 7 and c.extra["campaign"] == "m1" and c.extra["case"] == "gap-ack"
    assert c.system == "reference"
    clean = config_for(None, RECIPES["gap-ack"], "gap-ack", 7, backend="local", campaign="m1", time_limit=5)
    assert clean.bug == [] and clean.time_limit == 5 and clean.extra["case"] == f"{CLEAN} (gap-ack)"
    assert clean.workload == c.workload and clean.nemesis == c.nemesis


def test_rows_count_detections_times_and_catching_checkers() -> None:
    cells = [Cell("x", "x", 1, False, ["amnesia", "log"], 4.0), Cell("x", "x", 2, False, ["amnesia"], 8.0),
             Cell("x", "x", 3, True), Cell("x", "x", 4, "unknown"),
             Cell(None, "x", 1, True), Cell(None, "x", 2, True)]
    [x, clean] = summarize(cells)
    assert (x.bug, x.runs, x.detected, x.median_s) == ("x", 4, 2, 6.0)
    assert x.catching == [("amnesia", 2), ("log", 1)] and x.rate == 0.5
    assert (clean.bug, clean.runs, clean.detected) == (None, 2, 0)
    assert passed([x, clean], 0.5) and not passed([x, clean], 0.9)


def test_an_unknown_clean_run_is_a_false_alarm() -> None:
    [x, clean] = summarize([Cell("x", "x", 1, False), Cell(None, "x", 1, "unknown")])
    assert clean.detected == 1 and not passed([x, clean], 0.9)


def test_a_recipe_whose_mode_is_its_workload_has_no_clean_twin() -> None:
    from fencepost_etcd.recipes import BUGS

    recipes = {name: bug.recipe for name, bug in BUGS.items()}
    runs = plan(sorted(recipes), [1], recipes=recipes)
    assert (None, "serializable-reads", 1) in runs and (None, "lock", 1) not in runs


def test_a_run_that_errors_is_recorded_and_the_matrix_goes_on(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    # A real setup error: the reference system's metadata on etcd, on a machine without etcd on the PATH.
    (tmp_path / "bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    recipe = Recipe("register", (), 1.0, settings={"extra": {"metadata": "etcd"}})
    store = tmp_path / "store"
    cells = run_matrix(["etcd-metadata"], [1, 2], store, recipes={"etcd-metadata": recipe}, with_bugs=False)
    assert [c.seed for c in cells] == [1, 2]
    assert all("etcd is not installed" in c.error and c.verdict == "unknown" for c in cells)
    runs = [RunDir(Path(c.run)) for c in cells]
    assert len({r.path for r in runs}) == 2
    for r in runs:
        results = r.read_results() or {}
        assert results["valid"] == "unknown" and "etcd is not installed" in results["error"]
        assert results["case"] == f"{CLEAN} (etcd-metadata)"
    [clean] = summarize(cells)
    assert (clean.runs, clean.detected, clean.errored) == (2, 0, 2) and not passed([clean])
