"""The stats checker: how many ok, fail and info completions each function had.

Like Jepsen's, it also asks whether the test exercised each function at all: a function that never
once succeeded (say every ``cas`` failed) tells us nothing about that function. Jepsen calls that
invalid; here it is ``unknown``, since no anomaly was seen, only no evidence.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness.checker_protocol import UNKNOWN, CheckContext
from harness.history.op import Op
from harness.history.pairing import pair_calls

OUTCOMES = ("ok", "fail", "info")


def count_outcomes(history: Sequence[Op]) -> dict[str, dict[str, int]]:
    """``{f: {"ok": n, "fail": n, "info": n, "count": n}}`` over client calls (an unfinished call is info)."""
    by_f: dict[str, dict[str, int]] = {}
    for call in pair_calls(history):
        row = by_f.setdefault(call.f, {"ok": 0, "fail": 0, "info": 0, "count": 0})
        row[call.outcome.value] += 1
        row["count"] += 1
    return dict(sorted(by_f.items()))


class StatsChecker:
    """Counts outcomes per function; unknown if some function never succeeded."""

    name = "stats"

    def check(self, history: Sequence[Op], ctx: CheckContext) -> dict[str, Any]:
        """Count ok, fail and info per ``f``; see the module docstring for validity."""
        by_f = count_outcomes(history)
        totals = {o: sum(row[o] for row in by_f.values()) for o in (*OUTCOMES, "count")}
        never_ok = [f for f, row in by_f.items() if row["ok"] == 0]
        result: dict[str, Any] = {"valid": True, "by_f": by_f, **totals, "ops": len(history),
                                  "summary": f"{totals['ok']} ok, {totals['fail']} fail, {totals['info']} info "
                                             f"in {totals['count']} calls"}
        if not by_f:
            result["valid"] = UNKNOWN
            result["explanation"] = "The history holds no client operations, so nothing was tested."
        elif never_ok:
            result["valid"] = UNKNOWN
            result["never_ok"] = never_ok
            result["explanation"] = (
                f"No {', '.join(never_ok)} operation ever succeeded, so this run says nothing about "
                f"{'that function' if len(never_ok) == 1 else 'those functions'}."
            )
        return result
