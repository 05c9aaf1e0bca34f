"""No process and no iptables rule of a run survives it: normal end, SIGINT, or SIGKILL + cluster down."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.backends.iptables import delete_chain, leftover_chains, why_unavailable
from harness.history.formats import load_history
from tests.harness.live_store import run_files

pytestmark = pytest.mark.slow
FENCEPOST = [sys.executable, "-m", "harness.cli.main"]


def processes_under(path: Path) -> list[int]:
    """PIDs whose command line mentions ``path``."""
    needle = str(path).encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                if needle in fh.read():
                    found.append(int(entry))
        except OSError:
            continue
    return found


@pytest.fixture(autouse=True)
def reap_on_failure(tmp_path: Path) -> Iterator[None]:
    """Whatever a failing test leaves under its store is killed, and its runs' iptables chains removed."""
    yield
    for pid in processes_under(tmp_path):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    for chain in chains_of(tmp_path):
        delete_chain(chain)


def start_test(store: Path, *extra: str) -> subprocess.Popen[bytes]:
    nemesis = "partition,kill" if why_unavailable() is None else "kill"
    return subprocess.Popen([*FENCEPOST, "test", "--nemesis", nemesis, "--time-limit", "60", "--interval", "0.5",
                             "--seed", "3", "--store", str(store), *extra],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def wait_for_faults(store: Path, timeout: float = 90, fault: str | None = None) -> Path:
    """Wait until the run's history shows ``fault`` applied (default: a partition, or a kill without
    iptables); return its path."""
    fault = fault or ("start-partition" if why_unavailable() is None else "start-kill")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for history in run_files(store, "history.jsonl"):
            text = history.read_text()
            if f'"type":"info","f":"{fault}"' in text and text.count("\n") > 50:
                return history
        time.sleep(0.3)
    raise AssertionError(f"the run never applied {fault}")


def chains_of(store: Path) -> list[str]:
    """Leftover iptables chains of runs in ``store`` (chains are named after the run's folder), so runs
    of other stores on the same machine do not count."""
    tags = {"FP-" + p.parent.name.replace(".", "")[-20:] for p in run_files(store, "test.json")}
    return [c for c in leftover_chains() if c in tags]


def assert_clean(store: Path) -> None:
    deadline = time.monotonic() + 20
    while processes_under(store) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert processes_under(store) == []
    assert chains_of(store) == []


def test_a_finished_run_leaves_nothing(tmp_path: Path) -> None:
    nemesis = "partition,kill" if why_unavailable() is None else "kill"
    result = subprocess.run([*FENCEPOST, "test", "--nemesis", nemesis, "--time-limit", "6", "--interval", "1",
                             "--seed", "4", "--store", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "report:" in result.stdout
    assert_clean(tmp_path)


def test_sigint_tears_everything_down_and_keeps_the_history(tmp_path: Path) -> None:
    with start_test(tmp_path) as proc:
        try:
            history = wait_for_faults(tmp_path)
            proc.send_signal(signal.SIGINT)
            assert proc.wait(timeout=120) == 3
        finally:
            proc.kill()
    assert_clean(tmp_path)
    assert len(load_history(history, allow_torn_tail=True)) > 50


def test_sigkilled_harness_is_reaped_by_cluster_down_and_its_history_checks(tmp_path: Path) -> None:
    with start_test(tmp_path) as proc:
        try:
            history = wait_for_faults(tmp_path)
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            proc.kill()
    assert processes_under(tmp_path), "the killed harness should have left its cluster running"
    if why_unavailable() is None:
        assert chains_of(tmp_path), "the killed harness should have left its iptables chain"
    down = subprocess.run([*FENCEPOST, "cluster", "down", "--store", str(tmp_path)], capture_output=True, text=True,
                          timeout=120)
    assert down.returncode == 0, down.stderr
    assert_clean(tmp_path)
    check = subprocess.run([*FENCEPOST, "check", str(history)], capture_output=True, text=True, timeout=120)
    assert check.returncode in (0, 2), check.stdout + check.stderr
    assert "Traceback" not in check.stderr


def test_the_next_run_in_the_store_reaps_what_a_sigkilled_harness_left(tmp_path: Path) -> None:
    from harness.backends.lazyfs.mount import fuse_mounts_under
    from harness.backends.local import lazyfs_unavailable

    power = lazyfs_unavailable() is None
    with start_test(tmp_path, "--nemesis", "kill,lose-unsynced" if power else "kill") as proc:
        try:
            history = wait_for_faults(tmp_path, fault="start-kill")
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            proc.kill()
    killed = history.parent
    assert processes_under(killed), "the killed harness should have left its cluster running"
    if power:
        assert fuse_mounts_under(str(killed)), "the killed harness should have left its lazy filesystems mounted"
    nxt = subprocess.run([*FENCEPOST, "test", "--nemesis", "none", "--time-limit", "2", "--seed", "1", "--store",
                          str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert nxt.returncode == 0, nxt.stdout + nxt.stderr
    assert processes_under(killed) == []
    assert fuse_mounts_under(str(killed)) == []
    assert '"torn_down": true' in (killed / "cleanup.json").read_text()
    assert_clean(tmp_path)
