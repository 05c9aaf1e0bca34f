"""Scratch copies: fresh, without bytecode, confined, removed on exit, and reaped once their processes end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.mutation.scratch import OWNER, Session, alive, reap


@pytest.fixture
def code(tmp_path: Path) -> dict[str, Path]:
    pkg = tmp_path / "repo" / "pkg"
    (pkg / "__pycache__").mkdir(parents=True)
    (pkg / "a.py").write_text("x = 1\n")
    (pkg / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"stale")
    return {"pkg": pkg}


def test_a_copy_is_fresh_and_the_original_is_untouched(tmp_path: Path, code: dict[str, Path]) -> None:
    with Session(code, tmp_path / "scratch") as s:
        root = s.copy()
        assert (root / "pkg" / "a.py").read_text() == "x = 1\n" and not (root / "pkg" / "__pycache__").exists()
        s.write(root, "pkg/a.py", "x = 2\n")
        assert (root / "pkg" / "a.py").read_text() == "x = 2\n" and (code["pkg"] / "a.py").read_text() == "x = 1\n"
        assert s.copy() != root and (s.copy() / "pkg" / "a.py").read_text() == "x = 1\n"
        with pytest.raises(ValueError, match="outside"):
            s.write(root, "../../escape.py", "")
        owners = json.loads((s.dir / OWNER).read_text())["processes"]
        assert [p["pid"] for p in owners] == [os.getpid()]
        s.discard(root)
        assert not root.exists()
    assert not s.dir.exists()


def test_reap_removes_only_sessions_whose_processes_ended(tmp_path: Path, code: dict[str, Path]) -> None:
    parent = tmp_path / "scratch"
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(done.stdout)
    assert not alive(dead_pid)
    dead = parent / f"{dead_pid}-dead"
    (dead / "m1").mkdir(parents=True)
    (dead / OWNER).write_text(json.dumps({"processes": [{"pid": dead_pid, "started": None}]}))
    live = parent / f"{os.getpid()}-live"
    live.mkdir()
    (live / OWNER).write_text(json.dumps({"processes": [{"pid": dead_pid, "started": None},
                                                        {"pid": os.getpid(), "started": None}]}))
    assert reap(parent) == [dead]
    assert live.exists() and not dead.exists()
    with Session(code, parent):  # a new session reaps too
        pass
    assert live.exists()
