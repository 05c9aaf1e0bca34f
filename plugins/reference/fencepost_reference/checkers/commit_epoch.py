"""The commit-epoch checker (white box): a leader commits only entries of its own epoch directly.

Oxia's commit rule (and Raft's, section 5.4.2): the commit index may advance to an entry that a majority
holds only if that entry is of the leader's current epoch; entries of earlier epochs above the commit index
commit indirectly, when a later entry of the current epoch does. Counting replicas for an older entry is
unsafe: a node whose head has a higher epoch can still win an election and overwrite it (Raft's figure 8).

Every time a replica's commit index moves, it logs ``commit`` with its epoch, the new commit index, the id
of the entry there, and whether it was leading. This checker reads those events from the run's node logs
and reports each leader commit that landed on an entry of an earlier epoch. It is a trace check, like the
redundancy checker: the harm needs a further election, with the right heads, to show in the history.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fencepost import CheckContext, Op
from fencepost_reference.checkers.amnesia.evidence import load_evidence, trace_verdict


class CommitEpochChecker:
    """Every commit index a leader moves to names an entry of the leader's current epoch."""

    name = "commit-epoch"

    def check(self, history: Sequence[Op], ctx: CheckContext) -> dict[str, Any]:
        """Invalid on any direct commit of an earlier epoch's entry; unknown without node event logs."""
        ev = load_evidence(ctx.run_dir, history)
        violations: list[dict[str, Any]] = []
        judged = 0
        for e in ev.events:
            entry, epoch = e.get("entry"), e.get("epoch")
            if e.get("event") != "commit" or e.get("leader") is not True or not isinstance(epoch, int) \
                    or not isinstance(entry, list) or len(entry) != 2:
                continue
            judged += 1
            if entry[0] == epoch:
                continue
            violations.append({
                "rule": "leader committed an earlier epoch's entry directly", "node": e.get("source"),
                "tablet": e.get("tablet"), "epoch": epoch, "commit": e.get("commit"), "entry": entry,
                "at_ns": ev.history_ns(float(e.get("ts", 0))),
                "explanation": f"Leader {e.get('source')} of tablet {e.get('tablet')} at epoch {epoch} moved its "
                f"commit index to {e.get('commit')}, an entry of epoch {entry[0]}, by counting the replicas that "
                f"hold it. Entries of earlier epochs commit only under a later entry of the current epoch: a "
                f"node whose head has a higher epoch can still be elected and overwrite this one."})
        return trace_verdict({"leader_commits": judged}, violations, bool(ev.events), "commits",
                             f"All {judged} leader commits named an entry of the leader's epoch.")
