"""``fencepost recheck``: a stored run judged again with today's checkers, its report rendered again, and
its earlier verdict kept."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

FENCEPOST = [sys.executable, "-m", "harness.cli.main"]


@pytest.fixture(scope="module")
def stored_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("store")
    done = subprocess.run([*FENCEPOST, "test", "--system", "reference", "--nemesis", "none", "--time-limit", "3",
                           "--seed", "1", "--store", str(store)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    (run,) = [p.parent for p in store.glob("*/*/results.json")]
    return run


@pytest.mark.slow
def test_a_stored_run_is_judged_again_and_its_old_verdict_kept(stored_run: Path) -> None:
    results = stored_run / "results.json"
    earlier = json.loads(results.read_text())
    earlier["valid"] = False  # as a checker since fixed once judged it
    results.write_text(json.dumps(earlier))
    report = stored_run / "report.html"
    report.unlink()
    done = subprocess.run([*FENCEPOST, "recheck", str(stored_run)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith(f"VALID  {stored_run} (was INVALID)"), done.stdout
    assert json.loads(results.read_text())["valid"] is True
    (kept,) = stored_run.glob("results.*.json")
    assert json.loads(kept.read_text())["valid"] is False
    assert report.is_file() and f"report: {report}" in done.stdout


def test_a_folder_that_is_not_a_run_is_one_line_and_exit_3(tmp_path: Path) -> None:
    done = subprocess.run([*FENCEPOST, "recheck", str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 3
    assert done.stderr.strip() == f"fencepost: error: {tmp_path}: not a run folder (it needs test.json and " \
                                  "history.jsonl)"
