"""The README is a front door: at most 120 lines, and every command in it works, run here with short time
limits (a fresh clone's CI runs this file, so the README cannot drift from the code).

Each ``sh`` block's lines are run in order from the repository root, with three changes: runs write to a
temporary store (and witness folder), ``--time-limit`` is cut to :data:`SHORT` seconds (a bug's recipe gets
:data:`RECIPE_LIMIT`), and ``make test`` is skipped, since it is the suite this test belongs to. The prose
says what each command should exit with; :data:`EXPECTED` holds those codes and every command must be in it.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from harness.backends.iptables import why_unavailable

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
SHORT = 8
RECIPE_LIMIT = 25
EXPECTED = {
    "make run": 0,
    ".venv/bin/fencepost test --workload register": 0,
    ".venv/bin/fencepost check examples/histories/register-stale-read.invalid.jsonl": 1,
    ".venv/bin/fencepost check --witness": 1,
    ".venv/bin/fencepost test --system etcd --workload register": 0,
    ".venv/bin/fencepost test --system etcd --bug serializable-reads": 1,
}
"""Command prefix -> the exit code the README's prose promises."""


def commands() -> list[str]:
    """Every command line of the README's sh blocks, comments dropped."""
    blocks = re.findall(r"```sh\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)
    return [line.split("  #")[0].strip() for block in blocks for line in block.splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def shortened(command: str, tmp: Path) -> list[str]:
    """The command as this test runs it (see the module's docstring)."""
    if command == "make run":
        return ["make", "run", f"RUN_TIME={SHORT}", f"STORE={tmp / 'store'}"]
    argv = shlex.split(command)
    if argv[1] == "test":
        limit = RECIPE_LIMIT if "--bug" in argv else SHORT
        if "--time-limit" in argv:
            argv[argv.index("--time-limit") + 1] = str(limit)
        else:
            argv += ["--time-limit", str(limit)]
        argv += ["--store", str(tmp / "store"), "--seed", "1"]
    if "--witness" in argv:
        argv[argv.index("--witness") + 1] = str(tmp / "witnesses")
    return argv


def test_the_readme_is_short_and_its_commands_are_known() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 120
    found = commands()
    assert "make run" in found and "make test" in found
    for command in found:
        if command != "make test":
            assert any(command.startswith(prefix) for prefix in EXPECTED), f"no expected exit code for {command!r}"
    assert "../shared" not in README.read_text(encoding="utf-8")


@pytest.mark.slow
@pytest.mark.campaign
@pytest.mark.skipif(why_unavailable() is not None, reason=f"network faults: {why_unavailable()}")
@pytest.mark.skipif(shutil.which("etcd") is None, reason="etcd is not installed")
@pytest.mark.parametrize("command", [c for c in commands() if c != "make test"])
def test_each_readme_command_works(command: str, tmp_path: Path) -> None:
    argv = shortened(command, tmp_path)
    done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=600)
    want = next(code for prefix, code in EXPECTED.items() if command.startswith(prefix))
    assert done.returncode == want, f"{shlex.join(argv)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    if "--witness" in command:
        assert list((tmp_path / "witnesses").glob("*.witness.jsonl"))
