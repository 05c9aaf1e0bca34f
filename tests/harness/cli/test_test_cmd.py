"""``fencepost test --bug NAME``: the bug's recipe supplies everything the command line leaves out."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from fencepost_reference.recipes import recipe


def fencepost(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness.cli.main", *args], capture_output=True, text=True,
                          timeout=timeout)


def only_test_json(store: Path) -> dict:
    (found,) = store.glob("*/*/test.json")
    return dict(json.loads(found.read_text()))


@pytest.mark.parametrize(("extra", "nodes"), [((), 4), (("--nodes", "5"), 5)])
def test_bug_recipe_settings_apply_unless_given(tmp_path: Path, extra: tuple[str, ...], nodes: int) -> None:
    bug = "stale-copy-session"
    assert recipe(bug).settings == {"nodes": 4}
    run = fencepost("test", "--bug", bug, "--time-limit", "2", "--seed", "1", "--store", str(tmp_path), *extra)
    assert run.returncode in (0, 1, 2), run.stderr
    shown = next(line for line in run.stderr.splitlines() if "its recommended test" in line)
    assert ("--nodes 4" in shown) == (not extra)
    test = only_test_json(tmp_path)
    assert test["nodes"] == nodes and test["nemesis"] == list(recipe(bug).nemesis) and test["bug"] == [bug]
