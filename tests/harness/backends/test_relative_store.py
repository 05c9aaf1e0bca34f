"""A run store given as a relative path works from any directory (processes run in their code folder)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def test_a_relative_store_outside_the_checkout(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "harness.cli.main", "test", "--system", "reference", "--nemesis",
                           "none", "--time-limit", "3", "--seed", "1", "--store", "relative-store"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])})
    assert done.returncode == 0, done.stdout + done.stderr
    assert list((tmp_path / "relative-store").glob("*/*/results.json"))
