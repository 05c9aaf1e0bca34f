"""The availability checker: what fraction of calls succeeded during each kind of fault, and outside faults.

A call counts toward a fault kind when it was invoked inside one of that kind's windows (see
:mod:`harness.history.faults`). The checker also finds the longest stretch with no successful completion.
It judges nothing unless given a floor: with ``min_ok_fraction``, a fault kind whose ok fraction falls
below it makes the result invalid (for systems that promise to stay available).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness.checker_protocol import CheckContext
from harness.history.faults import fault_windows
from harness.history.op import Call, Op, OpType
from harness.history.pairing import pair_calls

NO_FAULT = "none"


def _tally(calls: Sequence[Call]) -> dict[str, Any]:
    ok = sum(1 for c in calls if c.outcome is OpType.OK)
    fail = sum(1 for c in calls if c.outcome is OpType.FAIL)
    info = len(calls) - ok - fail
    return {"calls": len(calls), "ok": ok, "fail": fail, "info": info,
            "ok_fraction": round(ok / len(calls), 4) if calls else None}


def _longest_outage(calls: Sequence[Call], start: int, end: int) -> tuple[int, int]:
    oks = sorted(c.return_time for c in calls if c.outcome is OpType.OK)
    best = (start, start)
    prev = start
    for t in [*oks, end]:
        if t - prev > best[1] - best[0]:
            best = (prev, t)
        prev = max(prev, t)
    return best


def _union_ns(spans: Sequence[tuple[int, int]]) -> int:
    """The total length of the union of ``spans``."""
    total, reach = 0, None
    for lo, hi in sorted(spans):
        if reach is None or lo > reach:
            total += hi - lo
            reach = hi
        elif hi > reach:
            total += hi - reach
            reach = hi
    return total


class AvailabilityChecker:
    """Per fault kind and outside faults: the ok fraction of calls invoked there, and the rate of ok
    completions there (which shows an outage even when blocked clients invoke little); and the longest
    stretch with no ok completion.

    Args:
        min_ok_fraction: if set, a fault kind whose ok fraction is below it makes the result invalid.
    """

    name = "availability"

    def __init__(self, *, min_ok_fraction: float | None = None) -> None:
        self.min_ok_fraction = min_ok_fraction

    def check(self, history: Sequence[Op], ctx: CheckContext) -> dict[str, Any]:
        """Tally outcomes by fault kind; see the class docstring for validity."""
        windows = fault_windows(history)
        calls = pair_calls(history)
        by_kind: dict[str, list[Call]] = {}
        for c in calls:
            kinds = {w.fault for w in windows if w.contains(c.call_time)} or {NO_FAULT}
            for kind in kinds:
                by_kind.setdefault(kind, []).append(c)
        start = min((op.time for op in history), default=0)
        end = max((op.time for op in history), default=0)
        rows = {kind: _tally(by_kind[kind]) for kind in sorted(by_kind)}
        ok_done = [c.return_time for c in calls if c.outcome is OpType.OK]
        for kind in {w.fault for w in windows}:
            mine = [w for w in windows if w.fault == kind]
            row = rows.setdefault(kind, _tally([]))
            row["windows"] = len(mine)
            seconds = _union_ns([(w.start, w.end) for w in mine]) / 1e9
            row["seconds"] = round(seconds, 3)
            oks = sum(1 for t in ok_done if any(w.contains(t) for w in mine))
            row["ok_per_s"] = round(oks / seconds, 2) if seconds > 0 else None
        if NO_FAULT in rows or not windows:
            row = rows.setdefault(NO_FAULT, _tally([]))
            seconds = (end - start - _union_ns([(w.start, w.end) for w in windows])) / 1e9
            oks = sum(1 for t in ok_done if not any(w.contains(t) for w in windows))
            row["ok_per_s"] = round(oks / seconds, 2) if seconds > 0 else None
        result: dict[str, Any] = {"valid": True, "by_fault": dict(sorted(rows.items()))}
        result["summary"] = "; ".join(self._headline(kind, row) for kind, row in result["by_fault"].items())
        if history:
            lo, hi = _longest_outage(calls, start, end)
            result["longest_outage_s"] = round((hi - lo) / 1e9, 3)
            result["longest_outage_at_s"] = round(lo / 1e9, 3)
            result["longest_outage_faults"] = sorted({w.fault for w in windows if w.start < hi and w.end > lo})
        if self.min_ok_fraction is not None:
            low = [k for k, row in result["by_fault"].items()
                   if row["ok_fraction"] is not None and row["ok_fraction"] < self.min_ok_fraction]
            if low:
                result["valid"] = False
                result["explanation"] = "\n".join(
                    f"During {k}: {result['by_fault'][k]['ok_fraction']:.1%} of calls succeeded, "
                    f"below the required {self.min_ok_fraction:.1%}." for k in low)
        return result

    @staticmethod
    def _headline(kind: str, row: dict[str, Any]) -> str:
        where = "without faults" if kind == NO_FAULT else f"during {kind}"
        parts = []
        if row["ok_fraction"] is not None:
            parts.append(f"{row['ok_fraction']:.0%} ok")
        if row.get("ok_per_s") is not None:
            parts.append(f"{row['ok_per_s']:g} ok/s")
        return f"{where}: {', '.join(parts) or 'no calls'}"
