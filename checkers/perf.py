"""The perf checker: latency quantiles per function and outcome, and mean throughput, as numbers.

It judges nothing (``valid`` is always True). Checkers judge and reports draw: the plots of the same
history (raw latency, latency quantiles and throughput over time, faults shaded) are the report's
perf view, :mod:`reports.perf_view`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from harness.checker_protocol import CheckContext
from harness.history.op import Call, Op
from harness.history.pairing import pair_calls

QUANTILES = (0.5, 0.95, 0.99, 1.0)


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
    """Latency quantiles and throughput."""

    name = "perf"

    def check(self, history: Sequence[Op], ctx: CheckContext) -> dict[str, Any]:
        """Summarise latency and throughput."""
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
        return result
