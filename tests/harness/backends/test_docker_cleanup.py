"""No container, network or volume of a docker run survives it: normal end, Ctrl-C, or SIGKILL + cluster down --all."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.backends import docker_objects as objs
from tests.harness.live_store import run_files

REASON = objs.engine_unavailable()
pytestmark = [pytest.mark.docker, pytest.mark.slow,
              pytest.mark.skipif(REASON is not None, reason=f"docker tests need a Docker engine: {REASON}")]
FENCEPOST = [sys.executable, "-m", "harness.cli.main"]
NOTHING: dict[str, list[str]] = {"containers": [], "networks": [], "volumes": []}


def start_test(store: Path, time_limit: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen([*FENCEPOST, "test", "--backend", "docker", "--nemesis", "partition,kill,wipe",
                             "--time-limit", str(time_limit), "--interval", "1", "--seed", "3", "--store", str(store)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def run_id_of(store: Path, timeout: float = 120) -> str:
    """The docker run id the harness wrote into its run folder."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for cleanup in run_files(store, "cleanup.json"):
            return str(json.loads(cleanup.read_text())["docker_run"])
        time.sleep(0.2)
    raise AssertionError("the run never wrote cleanup.json")


def wait_for_fault(store: Path, proc: subprocess.Popen[bytes], timeout: float = 150) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"the harness exited ({proc.returncode}) before applying a fault"
        for history in run_files(store, "history.jsonl"):
            if '"type":"info","f":"start-' in history.read_text():
                return
        time.sleep(0.3)
    raise AssertionError("the run never applied a fault")


def test_a_finished_run_leaves_nothing(tmp_path: Path) -> None:
    result = subprocess.run([*FENCEPOST, "test", "--backend", "docker", "--nemesis", "kill", "--time-limit", "4",
                             "--interval", "1", "--seed", "4", "--store", str(tmp_path)],
                            capture_output=True, text=True, timeout=400)
    run_id = run_id_of(tmp_path, 1)
    try:
        assert result.returncode == 0, result.stdout + result.stderr
        assert objs.leftovers(run_id) == NOTHING
    finally:
        objs.reap(run_id)


def test_ctrl_c_removes_everything(tmp_path: Path) -> None:
    with start_test(tmp_path, 60) as proc:
        try:
            run_id = run_id_of(tmp_path)
            wait_for_fault(tmp_path, proc)
            proc.send_signal(signal.SIGINT)
            assert proc.wait(timeout=120) == 3
        finally:
            proc.kill()
    try:
        assert objs.leftovers(run_id) == NOTHING
    finally:
        objs.reap(run_id)


def test_sigkilled_harness_is_reaped_by_cluster_down_all(tmp_path: Path) -> None:
    with start_test(tmp_path, 60) as proc:
        try:
            run_id = run_id_of(tmp_path)
            wait_for_fault(tmp_path, proc)
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            proc.kill()
    try:
        left = objs.leftovers(run_id)
        assert left["containers"] and left["networks"] and left["volumes"], "the killed harness should leave its run"
        # --store scopes --all to this test's runs: other sessions' docker runs on this engine live on
        down = subprocess.run([*FENCEPOST, "cluster", "down", "--all", "--store", str(tmp_path)], capture_output=True,
                              text=True, timeout=120)
        assert down.returncode == 0, down.stderr
        assert "removed 5 container(s), 1 network(s)" in down.stdout, down.stdout
        assert objs.leftovers(run_id) == NOTHING
    finally:
        objs.reap(run_id)
