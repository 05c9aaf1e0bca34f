"""``fencepost cluster up/status/down`` on a real local cluster, leaving no process behind."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from system.launcher import is_cluster_process, stop_from_file


def fencepost(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness.cli.main", *args], capture_output=True, text=True,
                          timeout=timeout)


def test_up_status_down(tmp_path: Path) -> None:
    d = tmp_path / "c"
    up = fencepost("cluster", "up", "--nodes", "3", "--tablets", "2", "--dir", str(d))
    try:
        assert up.returncode == 0, up.stderr
        assert "node n1  127.0.0.2:" in up.stdout and "operator op1" in up.stdout
        desc = json.loads((d / "cluster.json").read_text())
        pids = [p["pid"] for p in [*desc["nodes"].values(), *desc["operators"].values()]]
        assert all(is_cluster_process(p) for p in pids)
        assert all(n["uuid"] for n in desc["nodes"].values())

        again = fencepost("cluster", "up", "--dir", str(d))
        assert again.returncode == 3 and "already running" in again.stderr

        st = fencepost("cluster", "status", "--dir", str(d), "--json")
        assert st.returncode == 0, st.stderr
        status = json.loads(st.stdout)
        assert all(n["up"] for n in status["nodes"].values())
        assert {m["status"] for m in status["routing"]["tablets"].values()} == {"steady"}
        text = fencepost("cluster", "status", "--dir", str(d))
        assert "tablet 0: steady leader=" in text.stdout

        down = fencepost("cluster", "down", "--dir", str(d))
        assert down.returncode == 0, down.stderr
        assert not any(is_cluster_process(p) for p in pids)
    finally:
        if (d / "cluster.json").exists():
            stop_from_file(str(d))


def test_errors_are_one_line_exit_3(tmp_path: Path) -> None:
    for args in (("cluster", "status", "--dir", str(tmp_path / "none")),
                 ("cluster", "down", "--dir", str(tmp_path / "none")),
                 ("cluster", "up", "--dir", str(tmp_path / "x"), "--bug", "no-such-bug"),
                 ("cluster", "down", "--store", str(tmp_path / "no-store"))):
        r = fencepost(*args)
        assert r.returncode == 3, (args, r.stderr)
        assert r.stderr.count("\n") == 1 and r.stderr.startswith("fencepost: error:"), r.stderr
