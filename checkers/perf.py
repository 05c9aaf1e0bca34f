"""The perf checker: latency and throughput, as numbers and as plots with fault windows shaded.

Numbers: latency quantiles per function and outcome, and mean throughput. Plots (PNG, written under
``<run>/perf/`` when the check has a run folder): raw latency, latency quantiles over time, and
throughput over time. It judges nothing (``valid`` is always True).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from checkers.api import CheckContext
from harness.history.op import Call, Op
from harness.history.pairing import pair_calls

QUANTILES = (0.5, 0.95, 0.99, 1.0)
PLOT_DIR = "perf"


def quantile(sorted_values: Sequence[float], q: float) -> float:
    """The nearest-rank ``q`` quantile of already sorted values (``q`` in [0, 1])."""
    if not sorted_values:
        return math.nan
    rank = max(1, math.ceil(q * len(sorted_values)))
    return float(sorted_values[min(rank, len(sorted_values)) - 1])


def latency_ns(call: Call) -> int:
    """A completed call's latency: from its invocation to its completion op (even for info)."""
    assert call.complete is not None
    return call.complete.time - call.call_time


def completed_calls(history: Sequence[Op]) -> list[Call]:
    """Client calls that have a completion, so a known latency."""
    return [c for c in pair_calls(history) if c.complete is not None]


def latency_summary(calls: Sequence[Call]) -> dict[str, dict[str, dict[str, float]]]:
    """``{f: {outcome: {"count", "p50", "p95", "p99", "max"}}}`` with latencies in milliseconds."""
    groups: dict[str, dict[str, list[float]]] = {}
    for c in calls:
        groups.setdefault(c.f, {}).setdefault(c.outcome.value, []).append(latency_ns(c) / 1e6)
    out: dict[str, dict[str, dict[str, float]]] = {}
    for f, by_outcome in sorted(groups.items()):
        out[f] = {}
        for outcome, values in sorted(by_outcome.items()):
            values.sort()
            row: dict[str, float] = {"count": len(values)}
            for q in QUANTILES:
                row["max" if q == 1.0 else f"p{round(q * 100)}"] = round(quantile(values, q), 3)
            out[f][outcome] = row
    return out


class PerfChecker:
    """Latency quantiles and throughput, plus three plots when the run has a folder.

    Args:
        plots: draw the PNGs (matplotlib is imported only then).
    """

    name = "perf"

    def __init__(self, *, plots: bool = True) -> None:
        self.plots = plots

    def check(self, history: Sequence[Op], ctx: CheckContext) -> dict[str, Any]:
        """Summarise latency and throughput; draw the plots under ``<run>/perf/``."""
        calls = completed_calls(history)
        times = [op.time for op in history]
        duration_s = (max(times) - min(times)) / 1e9 if times else 0.0
        ok = sum(1 for c in calls if c.outcome.value == "ok")
        oks = sorted(latency_ns(c) / 1e6 for c in calls if c.outcome.value == "ok")
        result: dict[str, Any] = {
            "valid": True,
            "summary": (f"{ok} ok calls in {duration_s:.1f} s; ok latency p50 {quantile(oks, 0.5):.1f} ms, "
                        f"p99 {quantile(oks, 0.99):.1f} ms") if oks else "no ok calls",
            "duration_s": round(duration_s, 3),
            "calls": len(calls),
            "throughput_ok_per_s": round(ok / duration_s, 2) if duration_s > 0 else None,
            "latency_ms": latency_summary(calls),
        }
        if self.plots and ctx.run_dir is not None and calls:
            from reports.faults import fault_windows
            from reports.plots import draw_perf_plots

            out_dir = Path(ctx.run_dir) / PLOT_DIR
            written = draw_perf_plots(calls, fault_windows(history), out_dir, title=str(ctx.test.get("name", "")))
            result["plots"] = [p.relative_to(ctx.run_dir).as_posix() for p in written]
        return result
