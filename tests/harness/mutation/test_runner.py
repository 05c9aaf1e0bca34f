"""The mutant's test run: its environment takes the mutant from the scratch copy and the rest from the code
``fencepost mutate`` runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import harness
from harness.mutation.runner import CODE_ROOT, child_env


def test_the_child_runs_the_mutant_and_the_parents_harness_not_the_installed_one(tmp_path: Path) -> None:
    # At bd7b643 a `fencepost mutate` started from a worktree ran its tests with the harness of the checkout the
    # virtual environment was installed from (/work/main), which changed during the run.
    scratch, other = tmp_path / "scratch", tmp_path / "other"
    (scratch / "system").mkdir(parents=True)
    (scratch / "system" / "__init__.py").write_text("")
    (other / "harness").mkdir(parents=True)
    (other / "harness" / "__init__.py").write_text("")
    done = subprocess.run([sys.executable, "-P", "-c", "import harness, system; print(harness.__file__); "
                           "print(system.__file__)"], env=child_env(scratch, code_root=other), capture_output=True,
                          text=True, timeout=60, check=True)
    assert done.stdout.split() == [str(other / "harness" / "__init__.py"), str(scratch / "system" / "__init__.py")]


def test_the_code_root_is_the_one_this_process_runs() -> None:
    assert Path(harness.__file__).resolve().parent == CODE_ROOT / "harness"
