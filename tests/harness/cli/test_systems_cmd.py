"""``fencepost systems``: each installed system with its workloads, faults and bugs."""

from __future__ import annotations

import json
import subprocess
import sys


def test_lists_the_reference_system_with_its_workloads_faults_and_bugs() -> None:
    run = subprocess.run([sys.executable, "-m", "harness.cli.main", "systems", "--json"], capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    systems = {s["name"]: s for s in map(json.loads, run.stdout.splitlines())}
    ref = systems["reference"]
    assert ref["workloads"] == ["register", "set", "log", "bank"]
    assert {"partition", "kill", "failover", "lose-unsynced", "membership"} <= set(ref["faults"])
    assert len(ref["bugs"]) == 15 and "stale-leader-reads" in ref["bugs"]
    text = subprocess.run([sys.executable, "-m", "harness.cli.main", "systems"], capture_output=True, text=True,
                          timeout=60).stdout
    assert text.startswith("reference") or "\nreference " in text
    assert "  faults " in text and "stale-leader-reads" in text


def test_says_why_each_fault_a_system_is_not_offered_is_not() -> None:
    run = subprocess.run([sys.executable, "-m", "harness.cli.main", "systems", "--json"], capture_output=True,
                         text=True, timeout=60)
    systems = {s["name"]: s for s in map(json.loads, run.stdout.splitlines())}
    etcd = systems["etcd"]
    assert "clock" not in etcd["faults"]
    assert etcd["not_offered"]["clock"].startswith("needs clock: etcd is a Go program")
    assert systems["reference"]["not_offered"] == {}
    text = subprocess.run([sys.executable, "-m", "harness.cli.main", "systems"], capture_output=True, text=True,
                          timeout=60).stdout
    assert "  not offered   clock (needs clock: etcd is a Go program" in text
