"""Mutual exclusion, judged from the revisions that lock holders read.

The lock workload adds each element to one shared set by a read-modify-write inside the system's lock.
A client that can say which version of the set it read (``read_revision`` on the add's completion: etcd's
mod revision of the key, say) lets this checker see two holders at once directly: with a working lock,
each holder's read sees the write of the holder before it, so no two acknowledged adds read the same
version. Two acknowledged adds that read the same revision both read before either wrote: they were in
the critical section together, and the later write overwrote the earlier one's element.

An add whose write failed or is unknown proves nothing (the next holder rightly reads the same version).
A client that records no revisions leaves this checker nothing to judge; the set checker still sees
the lost adds such an overlap causes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from harness.checker_protocol import CheckContext
from harness.history.op import Op, OpType
from harness.history.pairing import pair_calls

REVISION = "read_revision"
"""The completion field naming the version of the guarded value the holder read."""
EXAMPLES = 10


class MutualExclusionChecker:
    """Invalid when two acknowledged adds read the same revision of the value the lock guards."""

    name = "mutual-exclusion"

    def __init__(self, add_f: str = "add") -> None:
        self.add_f = add_f

    def check(self, history: Sequence[Op], ctx: CheckContext) -> dict[str, Any]:
        """Group the acknowledged adds by the revision they read; a group of two or more is a violation."""
        by_revision: dict[Any, list[dict[str, Any]]] = defaultdict(list)
        judged = 0
        for call in pair_calls(history):
            if call.f != self.add_f or call.outcome is not OpType.OK or call.complete is None:
                continue
            revision = call.complete.extra.get(REVISION)
            if revision is None:
                continue
            judged += 1
            by_revision[revision].append({"element": call.input, "process": call.process,
                                          "invoked_at_ns": call.call_time, "acked_at_ns": call.return_time,
                                          "line": call.complete.index})
        overlaps = {rev: adds for rev, adds in sorted(by_revision.items(), key=lambda kv: repr(kv[0]))
                    if len(adds) > 1}
        if not judged:
            return {"valid": True, "holders_judged": 0,
                    "explanation": "The client recorded no read revisions: nothing to judge here (the set "
                                   "checker still judges the lock by its lost adds)."}
        if not overlaps:
            return {"valid": True, "holders_judged": judged,
                    "explanation": f"{judged} acknowledged holders each read a different revision of the "
                                   f"guarded set: no two held the lock at once."}
        examples = [{"revision": rev, "holders": adds} for rev, adds in list(overlaps.items())[:EXAMPLES]]
        first_rev, first = next(iter(overlaps.items()))
        shown = " and ".join(f"add {a['element']!r} (process {a['process']})" for a in first[:3])
        extra = sum(len(a) for a in overlaps.values())
        return {"valid": False, "holders_judged": judged, "violations": len(overlaps), "examples": examples,
                "explanation": f"Mutual exclusion violated: {len(overlaps)} time(s) two or more acknowledged "
                               f"lock holders read the same revision of the guarded set ({extra} holders in "
                               f"all), so they held the lock at once. E.g. {shown} both read revision "
                               f"{first_rev} and both wrote."}
