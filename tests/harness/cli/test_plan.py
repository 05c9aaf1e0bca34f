"""``fencepost test --plan``: the schedule a test would run, printed without starting anything."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from harness.config import TestConfig
from harness.launch import prepare
from harness.lifecycle import schedule_for
from harness.mix import default_campaign


def fencepost(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness.cli.main", *args], capture_output=True, text=True,
                          timeout=120, check=False)


def plan_of(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout.splitlines()[-1])["plan"])


def test_the_default_campaigns_plan_is_the_schedule_the_test_would_run(tmp_path: Path) -> None:
    store = tmp_path / "store"
    plan = plan_of(fencepost("test", "--plan", "--seed", "3", "--time-limit", "60", "--store", str(store)))
    assert not store.exists(), "the plan started a run"
    config = default_campaign(TestConfig(system="reference", workload="register", time_limit=60.0))
    config.seed = 3
    packages = prepare(config).packages
    schedule = schedule_for(config, packages)
    assert plan["windows"] == [w.to_dict() for w in schedule] and len(schedule) > 5
    assert plan["default_campaign"] is True and plan["lanes"] == 2 and plan["test"] == "reference-register-default"
    here = Counter((w.spec.package, w.spec.target) for w in schedule)
    assert {(f["package"], f["target"]): f["windows"] for f in plan["faults"] if f["windows"]} == dict(here)
    assert {f["package"] for f in plan["faults"]} == set(packages)
    assert sum(f["share"] for f in plan["faults"]) == pytest.approx(1.0, abs=1e-3)


def test_a_recipes_plan_has_only_its_targets() -> None:
    plan = plan_of(fencepost("test", "--plan", "--bug", "stale-leader-reads", "--seed", "2"))
    assert plan["default_campaign"] is False and plan["windows"]
    assert {(w["package"], w["target"]) for w in plan["windows"]} == {("partition", "leader-alone")}
    assert all("share" not in f for f in plan["faults"])


def test_a_plan_refuses_what_the_test_would_refuse() -> None:
    done = fencepost("test", "--plan", "--nemesis", "no-such-fault", "--seed", "1")
    assert done.returncode == 3 and "no-such-fault" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
