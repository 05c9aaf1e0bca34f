"""``fencepost bench txn`` at tiny sizes: it checks each history in a child and ends with one JSON line of figures."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from checkers import bench_txn


def test_a_quick_run_ends_with_the_figures_at_each_size(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bench_txn.main(2, ["--sizes", "600,300", "--processes", "8", "--keep", str(tmp_path)])
    lines = capsys.readouterr().out.strip().splitlines()
    figures = json.loads(lines[-1])
    assert figures["txns"] == 600 and figures["valid"] is True  # the largest size's, sizes sorted
    for key in ("seconds", "txns_per_s", "peak_rss_mib", "read_s", "check_s", "growth"):
        assert figures[key] > 0, key
    assert set(figures["sizes"]) == {"300", "600"}
    small = figures["sizes"]["300"]
    assert small["runs"] == 2 and small["txns"] == 300 and small["events"] >= 600
    assert small["peak_rss_mib"] < figures["peak_rss_mib"] * 2  # each size's RSS is its own child's
    assert abs(small["seconds"] - small["read_s"] - small["check_s"]) < 0.01
    assert (tmp_path / "list-append-300.jsonl").exists()
    assert sum("run " in line for line in lines) == 4


def test_bad_options_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        bench_txn.main(1, ["--sizes", "ten"])
    assert e.value.code == 3 and "bench txn:" in capsys.readouterr().err


def test_it_is_registered_as_a_bench() -> None:
    project = tomllib.loads((Path(__file__).parents[3] / "pyproject.toml").read_text())
    assert project["project"]["entry-points"]["fencepost.benches"]["txn"] == "checkers.bench_txn"
