"""The fencing checker (white box): the control plane never fences the leader of the epoch it fences at.

An epoch's leader is deposed only by a newer epoch: that is what makes fencing safe (Oxia's, as Raft's
terms). The control plane fences a node at the tablet's current epoch only to bring back a member that its
leader does not follow (a late join); one that sends that fence to the leader itself has mistaken the
leader for a lagging member, and asks it to give up the epoch it leads without a newer one. The leader
refuses, so nothing is lost at once, but the control plane is working from a wrong view of its own
tablet: it retries, and every fault it meets meanwhile meets a control plane that is not repairing the
tablet.

Evidence: the operators' ``fence_failed`` events, whose error carries the replica's refusal,
``stale_epoch: fence for epoch E, replica is at E (leader)`` when the fence reached the leader of its own
epoch. The checker is unknown without node event logs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from fencepost import CheckContext, Op
from fencepost_reference.checkers.amnesia.evidence import load_evidence, trace_verdict

REFUSAL = re.compile(r"fence for epoch (\d+), replica is at (\d+) \((\w+)\)")
"""The replica's stale_epoch refusal of a fence (``system/replica.py``): the fence's epoch, its own, its status."""


class FencingChecker:
    """No fence at an epoch reaches the node that leads that epoch."""

    name = "fencing"

    def check(self, history: Sequence[Op], ctx: CheckContext) -> dict[str, Any]:
        """Invalid on any fence refused by the leader of the fence's own epoch; unknown without event logs."""
        ev = load_evidence(ctx.run_dir, history)
        violations: list[dict[str, Any]] = []
        refused = 0
        for e in ev.events:
            if e.get("event") != "fence_failed":
                continue
            m = REFUSAL.search(str(e.get("error", "")))
            if m is None:
                continue
            refused += 1
            fence_epoch, at, status = int(m[1]), int(m[2]), m[3]
            if status != "leader" or at != fence_epoch:
                continue
            violations.append({
                "rule": "fenced the leader of the fence's own epoch", "operator": e.get("operator"),
                "node": e.get("node"), "tablet": e.get("tablet"), "epoch": fence_epoch,
                "at_ns": ev.history_ns(float(e.get("ts", 0))),
                "explanation": f"Operator {e.get('operator')} fenced {e.get('node')} for tablet {e.get('tablet')} at "
                f"epoch {fence_epoch}, the epoch {e.get('node')} leads: only a newer epoch deposes a leader, so "
                f"the control plane took its own tablet's leader for a lagging member."})
        return trace_verdict({"fences_refused": refused}, violations, bool(ev.events), "fences",
                             f"None of the {refused} fences refused as stale reached the leader of its own epoch.")
