"""No postgres process, data directory or iptables rule of a run outlives it: SIGTERM mid-run, or a SIGKILLed
harness and then ``fencepost cluster down``."""

from __future__ import annotations

import contextlib
import os
import pwd
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.backends.iptables import leftover_chains, why_unavailable
from tests.harness.live_store import run_files
from tests.plugins.postgresql.kit import WHY_NOT

pytestmark = [pytest.mark.slow, pytest.mark.skipif(WHY_NOT is not None, reason=f"PostgreSQL: {WHY_NOT}"),
              pytest.mark.skipif(why_unavailable() is not None, reason=f"partitions: {why_unavailable()}")]
FENCEPOST = [sys.executable, "-m", "harness.cli.main"]


def servers_under(store: Path) -> list[int]:
    """The postgres user's processes working in ``store`` (a backend's command line is its title, but its
    working directory is its data directory)."""
    uid = pwd.getpwnam("postgres").pw_uid
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError):
            if os.stat(f"/proc/{entry}").st_uid == uid and os.readlink(f"/proc/{entry}/cwd").startswith(str(store)):
                found.append(int(entry))
    return found


def start(store: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([*FENCEPOST, "test", "--system", "postgresql", "--workload", "list-append", "--nemesis",
                             "client-partition,kill", "--time-limit", "60", "--interval", "0.7", "--seed", "2",
                             "--store", str(store)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def wait_for(store: Path, fault: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for history in run_files(store, "history.jsonl"):
            if f'"type":"info","f":"{fault}","value":{{"target"' in history.read_text().replace(" ", ""):
                return
        time.sleep(0.3)
    raise AssertionError(f"the run never applied {fault}")


def own_chains(pid: int) -> list[str]:
    return [c for c in leftover_chains() if c.startswith(f"FP-c{pid}-")]


def assert_clean(store: Path, pid: int) -> None:
    deadline = time.monotonic() + 20
    while servers_under(store) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert servers_under(store) == []
    assert own_chains(pid) == []
    assert [p for p in store.rglob("cluster/data/n*") if p.is_dir()] == [], "a data directory was left"


def test_sigterm_mid_run_leaves_no_server_data_or_rule(tmp_path: Path) -> None:
    with start(tmp_path) as proc:
        try:
            wait_for(tmp_path, "start-client-partition")
            assert servers_under(tmp_path) and own_chains(proc.pid)
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=120) == 3
        finally:
            proc.kill()
    assert_clean(tmp_path, proc.pid)


def test_a_sigkilled_harness_is_reaped_by_cluster_down(tmp_path: Path) -> None:
    with start(tmp_path) as proc:
        try:
            wait_for(tmp_path, "start-client-partition")
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            proc.kill()
    assert servers_under(tmp_path), "the killed harness should have left its servers running"
    down = subprocess.run([*FENCEPOST, "cluster", "down", "--store", str(tmp_path)], capture_output=True, text=True,
                          timeout=120)
    assert down.returncode == 0, down.stderr
    assert_clean(tmp_path, proc.pid)
