from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from checkers.api import CheckContext
from checkers.perf import PerfChecker, quantile
from harness.history.op import Op, OpType
from tests.reports.sample_runs import sample_history

MS = 1_000_000


def test_nearest_rank_quantiles() -> None:
    values = [float(v) for v in range(1, 101)]
    assert quantile(values, 0.5) == 50.0
    assert quantile(values, 0.99) == 99.0
    assert quantile(values, 1.0) == 100.0
    assert quantile([7.0], 0.5) == 7.0


def test_latency_uses_the_completion_even_for_info_calls() -> None:
    history = [
        Op(0, 0, 0, OpType.INVOKE, "write", value=1), Op(1, 4 * MS, 0, OpType.OK, "write", value=1),
        Op(2, 5 * MS, 1, OpType.INVOKE, "write", value=2), Op(3, 505 * MS, 1, OpType.INFO, "write"),
        Op(4, 2000 * MS, 2, OpType.INVOKE, "read"), Op(5, 2001 * MS, 2, OpType.OK, "read", value=1),
    ]
    result = PerfChecker(plots=False).check(history, CheckContext())
    assert result["valid"] is True
    assert result["latency_ms"]["write"]["ok"]["max"] == 4.0
    assert result["latency_ms"]["write"]["info"]["max"] == 500.0
    assert result["duration_s"] == 2.001
    assert result["throughput_ok_per_s"] == round(2 / 2.001, 2)
    assert "plots" not in result


def test_draws_three_pngs_under_the_run_dir(tmp_path: Path) -> None:
    result = PerfChecker().check(sample_history(), CheckContext(test={"name": "t"}, run_dir=tmp_path))
    assert result["plots"] == ["perf/latency-raw.png", "perf/latency-quantiles.png", "perf/rate.png"]
    for rel in result["plots"]:
        data = (tmp_path / rel).read_bytes()
        assert data.startswith(b"\x89PNG") and len(data) > 10_000


@pytest.mark.parametrize("module", ["harness.cli.main", "checkers.perf", "reports.render", "reports.server"])
def test_matplotlib_is_not_imported_until_a_plot_is_drawn(module: str) -> None:
    code = f"import sys, {module}; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
