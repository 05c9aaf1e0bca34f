"""Every history in examples/histories/ gets the verdict its name says from `fencepost check`, run as a reader
runs it: NAME.valid.EXT exits 0, NAME.invalid.EXT exits 1, in each format, with the defaults."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HISTORIES = REPO / "examples" / "histories"
EXPECTED = {"valid": 0, "invalid": 1}
FILES = sorted(p for p in HISTORIES.iterdir() if p.name != "README.md")


def _fencepost() -> list[str]:
    """The `fencepost` installed beside this interpreter (the venv's), else the one on PATH."""
    exe = Path(sys.executable).with_name("fencepost")
    return [str(exe)] if exe.exists() else [shutil.which("fencepost") or "fencepost"]


def _expected(path: Path) -> int:
    verdict = path.name.split(".")[-2]
    assert verdict in EXPECTED, f"{path.name}: name it NAME.valid.EXT or NAME.invalid.EXT"
    return EXPECTED[verdict]


def test_every_format_has_a_valid_and_an_invalid_example() -> None:
    kinds = {(p.suffix, _expected(p)) for p in FILES}
    for suffix in (".jsonl", ".edn", ".log", ".txt"):
        assert {(suffix, 0), (suffix, 1)} <= kinds, suffix


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_fencepost_check_gives_the_verdict_in_the_name(path: Path) -> None:
    out = subprocess.run([*_fencepost(), "check", str(path)], capture_output=True, text=True, timeout=120,
                         check=False, stdin=subprocess.DEVNULL)
    assert out.returncode == _expected(path), out.stdout + out.stderr
    word = "valid" if _expected(path) == 0 else "INVALID"
    assert f"{path}: {word} " in out.stdout


def test_the_nil_read_rule_is_knossos_for_edn_unless_overridden() -> None:
    path = HISTORIES / "jepsen-nil-read.valid.edn"
    out = subprocess.run([*_fencepost(), "check", str(path), "--nil-read", "absent"], capture_output=True,
                         text=True, timeout=120, check=False, stdin=subprocess.DEVNULL)
    assert out.returncode == 1, out.stdout + out.stderr


def test_a_failed_cas_means_something_only_to_the_etcd_model() -> None:
    path = HISTORIES / "etcd-failed-cas.invalid.log"
    out = subprocess.run([*_fencepost(), "check", str(path), "--model", "cas-register"], capture_output=True,
                         text=True, timeout=120, check=False, stdin=subprocess.DEVNULL)
    assert out.returncode == 0, out.stdout + out.stderr
