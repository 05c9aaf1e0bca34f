"""The availability checker: what fraction of calls succeeded during each kind of fault, and outside faults.

A call counts toward a fault kind when it was invoked inside one of that kind's windows (see
:mod:`reports.faults`). The checker also finds the longest stretch with no successful completion.
It judges nothing unless given a floor: with ``min_ok_fraction``, a fault kind whose ok fraction falls
below it makes the result invalid (for systems that promise to stay available).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from checkers.api import CheckContext
from harness.history.op import Call, Op, OpType
from harness.history.pairing import pair_calls
from reports.faults import FaultWindow, fault_windows

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


class AvailabilityChecker:
    """Ok fraction per fault kind and outside faults, and the longest stretch with no ok completion.

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
        result: dict[str, Any] = {
            "valid": True,
            "by_fault": {kind: self._kind_row(kind, by_kind[kind], windows) for kind in sorted(by_kind)},
        }
        result["summary"] = "ok: " + ", ".join(
            f"{row['ok_fraction']:.0%} {'without faults' if kind == NO_FAULT else 'during ' + kind}"
            for kind, row in result["by_fault"].items() if row["ok_fraction"] is not None)
        if history:
            lo, hi = _longest_outage(calls, min(op.time for op in history), max(op.time for op in history))
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
    def _kind_row(kind: str, calls: Sequence[Call], windows: Sequence[FaultWindow]) -> dict[str, Any]:
        row = _tally(calls)
        if kind != NO_FAULT:
            mine = [w for w in windows if w.fault == kind]
            row["windows"] = len(mine)
            row["seconds"] = round(sum(w.end - w.start for w in mine) / 1e9, 3)
        return row
