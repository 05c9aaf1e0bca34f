"""``fencepost mutate`` end to end: listing, real short runs classified, and the checkout never mutated,
also when the campaign is interrupted with SIGINT or killed with SIGKILL mid-run."""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from harness import registry
from harness.mutation.scratch import PARENT, alive
from harness.store import RunStore

pytestmark = pytest.mark.slow

CAUGHT = "system/rules.py:NumberReplacer:11"
"""``majority(n)`` becomes ``n // 2``: one node of three commits and elects, which breaks the commit rule."""
EQUIVALENT = "system/rules.py:ReplaceComparisonOperator_Lt_NotEq:1"
"""Listed in the reference system's equivalents file."""
KILLS = ["--nemesis", "kill", "--interval", "1"]
FAILOVERS = ["--nemesis", "failover", "--interval", "1"]
"""Isolates a follower of the busiest leader, then kills the leader and heals, so the followers differ: a
leader that commits alone, and an election that takes the first node it fences, lose acknowledged writes.
Caught at 9 of seeds 1-10 here (10 s each); plain kills of a busy tablet caught it at 2 of 10, which let
CI miss it at all four seeds tried. The test tries seeds 1-4 and stops at the first catch."""


def fencepost(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness.cli.main", *args], capture_output=True, text=True,
                          timeout=timeout, check=False)


def checkout() -> dict[str, str]:
    """The sha256 of every file of the reference system's code folders, by path."""
    out = {}
    plugin: Any = registry.load_system("reference")
    for folder in plugin.code().values():
        for p in sorted(Path(folder).rglob("*")):
            if p.is_file() and "__pycache__" not in p.parts:
                out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def test_list_is_stable_and_the_sample_reproducible() -> None:
    every = fencepost("mutate", "--list", "--module", "rules.py")
    assert every.returncode == 0, every.stderr
    lines = every.stdout.splitlines()
    assert len(lines) > 100 and all(re.match(r"^system/rules\.py:\w+:\d+\t\d+\t.+  ->  ", line) for line in lines)
    assert any(line.startswith(EQUIVALENT) and line.endswith("(equivalent)") for line in lines)
    some = fencepost("mutate", "--list", "--module", "rules.py", "--sample", "6", "--sample-seed", "3").stdout
    assert fencepost("mutate", "--list", "--module", "rules.py", "--sample", "6", "--sample-seed", "3").stdout == some
    picked = some.splitlines()
    assert len(picked) == 6 and [line for line in lines if line in picked] == picked
    bad = fencepost("mutate", "--list", "--mutant", "system/rules.py:Nope:0")
    assert bad.returncode == 3 and "no such mutant" in bad.stderr


def test_a_caught_mutant_and_an_equivalent_one_on_real_runs(tmp_path: Path) -> None:
    before = checkout()
    store = tmp_path / "store"
    done = fencepost("mutate", "--mutant", CAUGHT, "--mutant", EQUIVALENT, "--first-seed", "1", "--seeds", "4",
                     "--time-limit", "10", *FAILOVERS, "--no-baseline", "--store", str(store),
                     "--campaign", "t-mutate")
    assert done.returncode == 0, done.stderr[-3000:]
    assert checkout() == before
    assert re.search(rf"\[\d/2\] CAUGHT {re.escape(CAUGHT)} \(line \d+: return n // 2 \+ 1 -> return n // 2 \+ 0\)",
                     done.stderr), done.stderr
    assert f"EQUIVALENT {EQUIVALENT}" in done.stderr
    figures = json.loads(done.stdout.splitlines()[-1])["mutate"]
    assert figures["counts"] == {"caught": 1, "missed": 0, "unknown": 0, "broken": 0, "equivalent": 1}
    assert figures["score"] == 1.0 and figures["missed"] == [] and figures["label"] == "failover"
    assert figures["detection_power"]["failover"]["mutants"] == 1
    assert figures["detection_power"]["failover"]["caught"] == 1.0
    assert figures["by_module"]["system/rules.py"]["score"] == 1.0
    page = Path(figures["page"])
    assert page == store / "mutation" / "t-mutate.html" and CAUGHT in page.read_text()
    summary = json.loads((store / "mutation" / "t-mutate.json").read_text())
    [caught] = [m for m in summary["mutants"] if m["id"] == CAUGHT]
    assert caught["status"] == "caught" and caught["faults"].get("failover", 0) >= 1
    assert "-    return n // 2 + 1\n+    return n // 2 + 0" in caught["diff"]
    assert all(r["time_limit_s"] == 10.0 for r in caught["runs"])  # from each run's test.json
    runs = list(RunStore(store).runs())
    results = [r.read_results() or {} for r in runs]
    assert len(runs) == len(caught["runs"]) and all(r["campaign"] == "t-mutate" for r in results)
    assert results[-1]["case"] == CAUGHT and results[-1]["valid"] is False
    assert json.loads((runs[-1].path / "mutant.json").read_text())["mutant"] == CAUGHT


def start_mutate(store: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "harness.cli.main", "mutate", "--mutant", CAUGHT, "--time-limit",
                             "30", *KILLS, "--no-baseline", "--store", str(store)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for_workload(store: Path, proc: subprocess.Popen[str], timeout: float = 120) -> Path:
    """The run folder, once its history holds client operations."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        for run in RunStore(store).runs():
            if run.history_path.exists() and run.history_path.stat().st_size > 2000:
                return run.path
        time.sleep(0.3)
    raise AssertionError("the mutant's test never started its workload")


def cluster_pids(run: Path) -> list[int]:
    return [int(p) for p in json.loads((run / "cleanup.json").read_text())["pids"]]


def test_sigint_mid_run_leaves_the_checkout_and_tears_the_cluster_down(tmp_path: Path) -> None:
    before = checkout()
    store = tmp_path / "store"
    proc = start_mutate(store)
    run = wait_for_workload(store, proc)
    assert list(PARENT.glob(f"{proc.pid}-*")), "no scratch session while a mutant runs"
    assert checkout() == before
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=180)
    assert proc.returncode == 3 and "interrupted" in err, err[-2000:]
    assert checkout() == before
    assert not list(PARENT.glob(f"{proc.pid}-*")), "the scratch session was left behind"
    assert not [p for p in cluster_pids(run) if alive(p)]


def test_sigkill_mid_run_leaves_the_checkout_and_the_next_start_reaps(tmp_path: Path) -> None:
    before = checkout()
    store = tmp_path / "store"
    proc = start_mutate(store)
    run = wait_for_workload(store, proc)
    [session] = PARENT.glob(f"{proc.pid}-*")
    test_pid = json.loads((session / "owner.json").read_text())["processes"][-1]["pid"]
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)
    deadline = time.monotonic() + 120  # the test got SIGTERM when its parent died, and tears its cluster down
    while alive(test_pid) and time.monotonic() < deadline:
        time.sleep(0.3)
    assert not alive(test_pid)
    assert checkout() == before
    assert not [p for p in cluster_pids(run) if alive(p)]
    assert session.exists()
    assert fencepost("mutate", "--list", "--module", "shards.py").returncode == 0
    assert not session.exists()
