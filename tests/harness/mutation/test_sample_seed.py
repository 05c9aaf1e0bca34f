"""``fencepost mutate``'s sample is drawn afresh each day (``--sample-seed`` defaults to the date, printed and
recorded), and a mutant is kept equivalent only with a reviewed reason in the kept file."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
from pathlib import Path

import pytest

from harness.mutation.cli import today_seed
from harness.mutation.equivalents import PLACEHOLDER, entry_toml, load
from harness.mutation.mutants import Mutant

SMALL = ["--module", "cursor.py"]
"""A module of few mutants, so that listing takes a second or two."""


def mutate(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness.cli.main", "mutate", *args], capture_output=True,
                          text=True, timeout=120, check=False)


def test_the_seed_is_the_date_in_utc() -> None:
    assert today_seed(dt.datetime(2026, 3, 9, 23, 59, tzinfo=dt.UTC)) == 20260309
    east = dt.timezone(dt.timedelta(hours=5))
    assert today_seed(dt.datetime(2026, 3, 10, 2, 0, tzinfo=east)) == 20260309, "the UTC date, not the local one"


def test_the_sample_seed_defaults_to_today_and_is_printed(tmp_path: Path) -> None:
    empty = tmp_path / "none.toml"
    empty.write_text("")
    before = today_seed()
    default = mutate("--list", *SMALL, "--sample", "5", "--equivalents", str(empty))
    days = {before, today_seed()}  # the date may turn while it runs
    assert default.returncode == 0, default.stderr
    shown = [d for d in days if f"(sample seed {d})" in default.stderr]
    assert shown, default.stderr
    given = mutate("--list", *SMALL, "--sample", "5", "--sample-seed", str(shown[0]), "--equivalents", str(empty))
    assert given.stdout == default.stdout and len(default.stdout.splitlines()) == 5


def entry(reason: str) -> str:
    return entry_toml(Mutant("system/rules.py", "NumberReplacer", 11, 3, "return n // 2 + 1", "return n // 2 + 2"),
                      reason)


@pytest.mark.parametrize("reason", [PLACEHOLDER, "   ", "todo: look at this later"])
def test_an_entry_without_a_reviewed_reason_is_refused_naming_its_line(tmp_path: Path, reason: str) -> None:
    path = tmp_path / "equivalent.toml"
    path.write_text("# reviewed\n\n" + entry("the two agree: n is never odd here") + "\n" + entry(reason))
    with pytest.raises(ValueError, match=rf"{path.name}:9: entry 2 \(system/rules.py:NumberReplacer:11\)") as e:
        load(path)
    assert "reason" in str(e.value)
    path.write_text(entry("the two agree: n is never odd here"))
    assert [x.reason for x in load(path)] == ["the two agree: n is never odd here"]


def test_mutate_refuses_such_a_file_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "equivalent.toml"
    path.write_text(entry(PLACEHOLDER))
    done = mutate("--list", *SMALL, "--equivalents", str(path))
    assert done.returncode == 3 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and f"{path}:1: entry 1" in done.stderr
