"""The default campaign, as a new user meets it: ``fencepost test`` with no ``--nemesis``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.backends.iptables import why_unavailable

pytestmark = [pytest.mark.campaign, pytest.mark.slow,
              pytest.mark.skipif(why_unavailable() is not None, reason=f"partitions: {why_unavailable()}")]


def fencepost(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness.cli.main", *args], capture_output=True, text=True,
                          timeout=600, env={**os.environ, "COLUMNS": "200"})


def test_the_default_campaign_runs_every_fault_overlapping_and_the_correct_system_stays_valid(tmp_path: Path) -> None:
    done = fencepost("test", "--seed", "2", "--time-limit", "30", "--store", str(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "the default campaign: " in done.stderr
    run = next(p for p in tmp_path.glob("*-default/*") if p.is_dir())
    config = json.loads((run / "test.json").read_text())
    assert config["nodes"] == 4 and config["extra"]["mix"] == "default"
    assert {"kill", "partition", "failover", "copy-failover", "wipe"} <= set(config["nemesis"])
    planned = json.loads((run / "schedule.json").read_text())
    assert {w.get("lane", 0) for w in planned} == {0, 1}
    # Which windows wait for a transition is a draw from the seed (tests/harness/test_mix.py measures the
    # share); what this run must show is that the campaign offers them.
    assert config["extra"]["triggers"], "the default campaign offers windows that wait for a transition"
    assert all(w.get("trigger") in (None, *config["extra"]["triggers"]) for w in planned)
    starts = [json.loads(line) for line in (run / "history.jsonl").read_text().splitlines()
              if '"process":"nemesis"' in line.replace(" ", "") and '"start-' in line]
    assert len({op["f"] for op in starts}) >= 4, "several different faults struck"
    assert 'id="faults"' in (run / "report.html").read_text()


def test_nemesis_none_runs_no_faults(tmp_path: Path) -> None:
    done = fencepost("test", "--nemesis", "none", "--seed", "1", "--time-limit", "5", "--store", str(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    run = next(p for p in tmp_path.glob("*/*") if (p / "test.json").is_file())
    assert "default campaign" not in done.stderr and json.loads((run / "test.json").read_text())["nemesis"] == []
    assert '"process":"nemesis"' not in (run / "history.jsonl").read_text().replace(" ", "")
