"""Amnesia safety: a node must never forget what the protocol guaranteed it had persisted.

The checker reads the history, every node's event log and final state dump, and the nemesis's wipe
records, and checks eight rules:

1. every acknowledged write is in the final state (lost or stale results say when it was acknowledged
   and which faults were around it);
2. for each node UUID, the epoch it reports never goes down, across restarts included;
3. at most one leader per (tablet, epoch);
4. replicas agree on every entry at or below the commit index;
5. a node whose disk was wiped never again answers under its old UUID;
6. tombstoned replicas keep their last epoch;
7. a deleted key never comes back;
8. no node restarts with its log shorter than the commit index it checkpointed (fsynced, committed
   entries vanished), unless the nemesis damaged its files.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fencepost import UNKNOWN, CheckContext, Op
from fencepost_reference.checkers.amnesia.evidence import load_evidence
from fencepost_reference.checkers.amnesia.rules import RULES

__all__ = ["AmnesiaChecker"]


class AmnesiaChecker:
    """Judge a run against the eight amnesia-safety rules; every violation is explained in words."""

    name = "amnesia"

    def check(self, history: Sequence[Op], ctx: CheckContext) -> dict[str, Any]:
        """Invalid on any violation; unknown when the run left no event logs or dumps to judge."""
        ev = load_evidence(ctx.run_dir, history)
        violations = [v for rule in RULES for v in rule(history, ev)]
        by_rule: dict[str, int] = {}
        for v in violations:
            by_rule[v["rule"]] = by_rule.get(v["rule"], 0) + 1
        if violations:
            valid: bool | str = False
            explanation = "\n".join(v["explanation"] for v in violations[:10])
            if len(violations) > 10:
                explanation += f"\n... and {len(violations) - 10} more violations."
        elif not ev.events and not ev.dumps:
            valid = UNKNOWN
            explanation = "No node event logs or state dumps were collected, so amnesia could not be judged."
        else:
            valid = True
            explanation = (f"All eight rules hold over {len(ev.events)} node events, {len(ev.dumps)} final dumps "
                           f"and {len(ev.wipes)} wipes.")
        times = [v["at_ns"] for v in violations if isinstance(v.get("at_ns"), int)]
        result = {"valid": valid, "violations": violations[:100], "by_rule": by_rule, "events": len(ev.events),
                  "dumps": sorted(ev.dumps), "wipes": len(ev.wipes), "explanation": explanation}
        if times:
            result["first_anomaly_s"] = round(max(0, min(times)) / 1e9, 3)
        return result
