from __future__ import annotations

import subprocess
import sys

import pytest

from checkers.perf import PerfChecker, quantile
from harness.checker_protocol import CheckContext
from harness.history.op import Op, OpType

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
    result = PerfChecker().check(history, CheckContext())
    assert result["valid"] is True
    assert result["latency_ms"]["write"]["ok"]["max"] == 4.0
    assert result["latency_ms"]["write"]["info"]["max"] == 500.0
    assert result["duration_s"] == 2.001
    assert result["throughput_ok_per_s"] == round(2 / 2.001, 2)
    assert "plots" not in result


@pytest.mark.parametrize("module", ["harness.cli.main", "checkers.perf", "reports.perf_view", "reports.render",
                                    "reports.server"])
def test_matplotlib_is_not_imported_until_a_plot_is_drawn(module: str) -> None:
    code = f"import sys, {module}; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
