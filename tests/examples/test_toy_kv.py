"""An outside plugin, proven: examples/toy_kv installed with pip into a fresh environment and driven through
the CLI and the conformance kit, as a user testing their own system would."""

from __future__ import annotations

import json
import subprocess
import venv
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.backends.iptables import why_unavailable

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A new virtual environment holding Fencepost (its core only: no docker, spark or fuse extras), toy-kv and
    pytest; its bin folder."""
    env = tmp_path_factory.mktemp("fresh") / "venv"
    venv.EnvBuilder(with_pip=True).create(env)
    bin_dir = env / "bin"
    pip = [str(bin_dir / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    done = subprocess.run([*pip, "-e", str(REPO), "-e", str(REPO / "examples" / "toy_kv"), "pytest",
                           "pytest-timeout"], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    yield bin_dir


def fencepost(bin_dir: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(bin_dir / "fencepost"), *args], capture_output=True, text=True, timeout=timeout,
                          cwd=bin_dir.parent)


def test_the_fresh_install_lists_only_the_plugin_it_installed_and_runs_it_unnamed(fresh: Path) -> None:
    """Fencepost's core brings no system of its own (the shipped ones are plugins too): installed with
    toy-kv alone, it lists toy-kv alone, and a command that names no system runs it."""
    listed = fencepost(fresh, "systems")
    assert listed.returncode == 0, listed.stderr
    names = [line.split()[0] for line in listed.stdout.splitlines() if line and not line.startswith(" ")]
    assert names == ["toy-kv"]
    assert "async-replication" in listed.stdout
    planned = fencepost(fresh, "test", "--nemesis", "kill", "--plan", "--seed", "1")
    assert planned.returncode == 0, planned.stderr
    assert "Plan of toy-kv-register-kill" in planned.stdout
    extras = subprocess.run([str(fresh / "python"), "-c", "import importlib.util as u; "
                             "print([m for m in ('docker', 'pyspark', 'mfusepy') if u.find_spec(m)])"],
                            capture_output=True, text=True, timeout=60)
    assert extras.stdout.strip() == "[]"


def test_a_fault_the_system_cannot_do_is_one_line_and_exit_3(fresh: Path) -> None:
    refused = fencepost(fresh, "test", "--system", "toy-kv", "--nemesis", "lose-unsynced")
    assert refused.returncode == 3
    assert refused.stderr.count("\n") == 1 and "power-loss capability" in refused.stderr
    assert "toy-kv" in refused.stderr and "Traceback" not in refused.stderr


def test_the_correct_store_is_valid_and_the_unsafe_mode_is_caught(fresh: Path, tmp_path: Path) -> None:
    faults = "partition,kill" if why_unavailable() is None else "kill"
    base = ["test", "--system", "toy-kv", "--workload", "register", "--nemesis", faults, "--time-limit", "20",
            "--seed", "2", "--store", str(tmp_path)]
    clean = fencepost(fresh, *base)
    assert clean.returncode == 0, clean.stdout + clean.stderr[-1000:]
    assert "VALID  toy-kv-register" in clean.stdout
    buggy = fencepost(fresh, *base, "--bug", "async-replication")
    assert buggy.returncode == 1, buggy.stdout + buggy.stderr[-1000:]
    assert "linearizable: INVALID" in buggy.stdout
    latest = max(tmp_path.glob("toy-kv-register*/2*/results.json"))  # run directories are named by start time
    why = json.loads(latest.read_text())["checkers"]["linearizable"]["explanation"].strip().splitlines()[0]
    assert f"    {why.strip()[:100]}" in buggy.stdout, "the terminal says why, not only that"


def test_the_plugin_passes_the_conformance_kit_in_its_own_tests(fresh: Path) -> None:
    kit = subprocess.run([str(fresh / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider"],
                         capture_output=True, text=True, timeout=900, cwd=REPO / "examples" / "toy_kv")
    assert kit.returncode == 0, kit.stdout[-3000:]
    assert "7 passed" in kit.stdout
