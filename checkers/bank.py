"""Bank checker: every read of the accounts sums to the same total, and no balance goes negative."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness.checker_protocol import CheckContext
from harness.history.op import Op
from harness.history.pairing import pair_calls

EXAMPLES = 20


class BankChecker:
    """Judge a bank workload: reads return ``{account: balance}``; the total must be conserved.

    Args:
        total: the conserved total.
        read_f: the function whose ok results are account maps.
    """

    name = "bank"

    def __init__(self, total: int, read_f: str = "read") -> None:
        self.total = total
        self.read_f = read_f

    def check(self, history: Sequence[Op], ctx: CheckContext) -> dict[str, Any]:
        """Invalid if any ok read sums to another total or holds a negative balance."""
        bad: list[dict[str, Any]] = []
        reads = bad_reads = 0
        for call in pair_calls(history):
            if call.f != self.read_f or call.outcome.value != "ok" or call.output is None:
                continue
            reads += 1
            balances = dict(call.output)
            total = sum(balances.values())
            negative = {a: b for a, b in balances.items() if b < 0}
            if total == self.total and not negative:
                continue
            bad_reads += 1
            if len(bad) < EXAMPLES:
                bad.append({"index": call.invoke.index, "process": call.process, "total": total,
                            "negative": negative, "balances": balances})
        valid = bad_reads == 0
        explanation = (f"all {reads} reads sum to {self.total} with no negative balance" if valid else
                       f"{bad_reads} of {reads} reads broke conservation, e.g. op {bad[0]['index']} saw total "
                       f"{bad[0]['total']} (expected {self.total})")
        return {"valid": valid, "reads": reads, "bad_reads": bad_reads, "errors": bad, "explanation": explanation}
