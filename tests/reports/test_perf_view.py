from __future__ import annotations

from pathlib import Path

from reports.perf_view import PerfView
from tests.reports.sample_runs import sample_history


def test_draws_three_pngs_under_the_run_dir(tmp_path: Path) -> None:
    result = PerfView().draw(sample_history(), {"name": "t"}, tmp_path)
    assert result["plots"] == ["perf/latency-raw.png", "perf/latency-quantiles.png", "perf/rate.png"]
    for rel in result["plots"]:
        data = (tmp_path / rel).read_bytes()
        assert data.startswith(b"\x89PNG") and len(data) > 10_000


def test_without_a_run_dir_nothing_is_drawn() -> None:
    assert PerfView().draw(sample_history(), {}, None)["plots"] == []
