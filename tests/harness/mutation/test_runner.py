"""The mutant's test run: its environment takes the mutant from the scratch copy and the rest from the code
``fencepost mutate`` runs."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

import harness
from harness.mutation.runner import CODE_ROOT, child_env, child_setup, stop


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


def test_a_killed_child_is_torn_down_by_the_parents_harness(tmp_path: Path) -> None:
    # Up to 8c59952 `stop` ran `cluster down` with the default environment after a SIGKILL: the installed
    # harness, not the one the child ran (the same flaw 6ffdd27 fixed for the child itself).
    scratch, other, marker = tmp_path / "scratch", tmp_path / "other", tmp_path / "down.txt"
    scratch.mkdir()
    cli = other / "harness" / "cli"
    cli.mkdir(parents=True)
    (other / "harness" / "__init__.py").write_text("")
    (cli / "__init__.py").write_text("")
    (cli / "main.py").write_text(f"import sys\nopen({str(marker)!r}, 'w').write(' '.join(sys.argv[1:]))\n")
    stubborn = subprocess.Popen([sys.executable, "-c", "import signal, time\n"
                                 "for s in (signal.SIGINT, signal.SIGTERM): signal.signal(s, signal.SIG_IGN)\n"
                                 "print('ready', flush=True)\ntime.sleep(60)"],
                                stdout=subprocess.PIPE, start_new_session=True)
    assert stubborn.stdout is not None
    with stubborn.stdout:
        assert stubborn.stdout.readline() == b"ready\n"
        stop(stubborn, tmp_path / "store", env=child_env(scratch, code_root=other), grace_s=0.2, term_grace_s=0.2)
    assert stubborn.returncode == -signal.SIGKILL
    assert marker.read_text() == f"cluster down --store {tmp_path / 'store'}"


@pytest.mark.skipif(sys.platform != "linux", reason="the child's set-up runs on Linux")
def test_the_child_gets_sigint_even_when_mutate_runs_with_it_ignored() -> None:
    # On 2026-11-30 a `fencepost mutate` started in the background by a shell script ignored SIGINT, and so
    # did its test: `stop`'s SIGINT did nothing and every stop waited out the 90 s grace.
    saved = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        done = subprocess.run([sys.executable, "-c", "import signal; print(signal.getsignal(signal.SIGINT).__name__)"],
                              preexec_fn=child_setup, capture_output=True, text=True, timeout=60, check=True)
    finally:
        signal.signal(signal.SIGINT, saved)
    assert done.stdout.strip() == "default_int_handler"
