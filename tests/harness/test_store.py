from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from harness.history.op import Op, OpType
from harness.store import RunStore, safe_name


def test_create_run_lays_out_the_folder_and_points_latest(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "store")
    run = store.create_run("register partition/kill", {"seed": 7, "nodes": 3})
    assert run.path.parent.name == "register-partition-kill"
    assert run.read_config() == {"seed": 7, "nodes": 3}
    assert run.log_path.exists() and (run.path / "nodes").is_dir()
    latest = store.latest()
    assert latest is not None and latest.path == run.path
    second = store.create_run("register partition/kill", {"seed": 8})
    assert second.path != run.path
    latest = store.latest()
    assert latest is not None and latest.path == second.path
    assert [r.path for r in store.runs()] == sorted([run.path, second.path])
    assert run.node_dir("n1").is_dir()


def test_results_round_trip(tmp_path: Path) -> None:
    run = RunStore(tmp_path).create_run("t", {})
    assert run.read_results() is None
    run.write_results({"valid": False, "checkers": {"linear": {"valid": False}}})
    assert run.read_results() == {"valid": False, "checkers": {"linear": {"valid": False}}}


def test_history_survives_a_killed_writer(tmp_path: Path) -> None:
    """A writer killed with SIGKILL mid-run leaves a history that still reads and validates."""
    run = RunStore(tmp_path).create_run("killed", {})
    script = (
        "import sys, time\n"
        "from harness.store import RunDir\n"
        "from harness.history.op import Op, OpType\n"
        "from pathlib import Path\n"
        "w = RunDir(Path(sys.argv[1])).history_writer()\n"
        "i = 0\n"
        "for p in range(10**9):\n"
        "    w.write(Op(i, i, p, OpType.INVOKE, 'write', value=p)); i += 1\n"
        "    w.write(Op(i, i, p, OpType.OK, 'write', value=p)); i += 1\n"
        "    if i == 2000: print('ready', flush=True)\n"
    )
    with subprocess.Popen([sys.executable, "-c", script, str(run.path)], stdout=subprocess.PIPE, text=True) as proc:
        try:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
            time.sleep(0.2)
        finally:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    ops = run.read_history()
    assert len(ops) >= 2000
    assert ops[:2] == [Op(0, 0, 0, OpType.INVOKE, "write", value=0), Op(1, 1, 0, OpType.OK, "write", value=0)]


def test_safe_name() -> None:
    assert safe_name("a b/c") == "a-b-c"
    assert safe_name("../..") == "test"
