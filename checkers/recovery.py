"""The recovery checker: once every fault has healed, the system serves again.

A replicated store promises more than safety: when the faults stop, it comes back. After the heal and
the recovery pause, the harness runs each workload's final operations (processes from
:data:`harness.history.op.FINAL_PROCESS_BASE` on: reads, and the register workload's write of each key
before its read), trying each one that does not succeed again for up to ``FINAL_PATIENCE_S`` seconds
(:mod:`harness.lifecycle`). A final operation that never succeeded means the cluster did not recover: an
election that never ends, a commit index that never moves, a reconfiguration stuck half-way, a replica
never repaired. No black-box safety checker sees this, since operations that
never complete are indeterminate, and an indeterminate history is never invalid for being unfinished.

A run without final operations leaves this checker nothing to judge. (The result keeps the name
``final_reads`` for the number of final operations judged.)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness.checker_protocol import CheckContext
from harness.history.op import FINAL_PROCESS_BASE, Op, OpType
from harness.history.pairing import pair_calls

EXAMPLES = 10


class RecoveryChecker:
    """Invalid when some final operation, tried again until the patience ran out, never succeeded."""

    name = "recovery"

    def check(self, history: Sequence[Op], ctx: CheckContext) -> dict[str, Any]:
        """Group the final operations by function and key; a group with no ok is a cluster that did not
        recover."""
        groups: dict[str, list[Any]] = {}
        for call in pair_calls(history):
            if isinstance(call.process, int) and call.process >= FINAL_PROCESS_BASE:
                groups.setdefault(f"{call.f} {call.key!r}", []).append(call)
        if not groups:
            return {"valid": True, "final_reads": 0,
                    "explanation": "The workload has no final operations: nothing to judge here."}
        stuck = {name: calls for name, calls in groups.items() if not any(c.outcome is OpType.OK for c in calls)}
        if not stuck:
            tries = max(len(calls) for calls in groups.values())
            return {"valid": True, "final_reads": len(groups),
                    "explanation": f"Every final operation succeeded after the heal ({len(groups)}, at most "
                                   f"{tries} attempt(s) each): the system recovered."}
        examples = []
        for name, calls in list(stuck.items())[:EXAMPLES]:
            last = calls[-1]
            examples.append({"read": name, "attempts": len(calls), "first_at_ns": calls[0].call_time,
                             "last_error": last.complete.error if last.complete is not None else "no answer",
                             "outcomes": [c.outcome.value for c in calls]})
        first = examples[0]
        seconds = (stuck[first["read"]][-1].call_time - first["first_at_ns"]) / 1e9
        return {"valid": False, "final_reads": len(groups), "stuck": len(stuck), "examples": examples,
                "first_anomaly_s": round(first["first_at_ns"] / 1e9, 3),
                "explanation": f"The system did not recover after the faults healed: {len(stuck)} of "
                               f"{len(groups)} final operation(s) never succeeded. E.g. {first['read']}: "
                               f"{first['attempts']} attempt(s) over {seconds:.1f} s, the last: "
                               f"{first['last_error']}."}
