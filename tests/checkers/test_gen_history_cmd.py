"""``fencepost gen-history``: deterministic files that ``check`` agrees with."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli.main import main


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    with pytest.raises(SystemExit) as e:
        main(list(args))
    return int(e.value.code or 0), capsys.readouterr().out


def gen(capsys: pytest.CaptureFixture[str], out: Path, *extra: str) -> None:
    try:
        main(["gen-history", "--ops", "3000", "--keys", "30", "--processes", "8", "--unique-values",
              "--seed", "5", "--out", str(out), *extra])
    except SystemExit as e:
        assert not e.code
    capsys.readouterr()


def test_same_seed_same_file_and_valid(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    gen(capsys, tmp_path / "a.jsonl")
    gen(capsys, tmp_path / "b.jsonl")
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    code, out = cli(capsys, "check", "--model", "register", "--json", str(tmp_path / "a.jsonl"))
    assert code == 0 and json.loads(out.splitlines()[-1])["ops"] == 3000  # --json: partition lines, then the file


def test_anomalies_each_in_a_different_key(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    gen(capsys, tmp_path / "bad.jsonl", "--anomalies", "3")
    code, out = cli(capsys, "check", "--model", "register", "--all-violations", "--json", str(tmp_path / "bad.jsonl"))
    assert code == 1 and len(set(json.loads(out.splitlines()[-1])["invalid_keys"])) == 3
