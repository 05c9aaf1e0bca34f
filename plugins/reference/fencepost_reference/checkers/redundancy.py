"""The redundancy checker (white box): a reconfiguration never leaves committed entries on a minority.

Oxia's contract rule: a node may leave the ensemble only if the leader's commit index, recomputed over the
remaining members, is not lower than it is now; otherwise some committed entries would be held by fewer
than a majority of the new ensemble, and one more failure could elect a leader that never had them.

Each leader logs, when it applies a contract, its commit index and every remaining member's confirmed
offset (``reconfig_committed`` with ``commit`` and ``remaining_confirmed``). This checker reads those
events from the run's node logs and finds every contract after which fewer than a majority of the
remaining members had confirmed the commit index. It is a trace check: it judges what the nodes reported
they did against the protocol's rule, where the harm itself needs a further, rarer failure to show.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fencepost import CheckContext, Op
from fencepost_reference.checkers.amnesia.evidence import load_evidence, trace_verdict


def holders_needed(members: int) -> int:
    """A majority of ``members``."""
    return members // 2 + 1


class RedundancyChecker:
    """Every contract keeps each committed entry on a majority of the remaining ensemble."""

    name = "redundancy"

    def check(self, history: Sequence[Op], ctx: CheckContext) -> dict[str, Any]:
        """Invalid on any unsafe contract; unknown when the run left no node event logs."""
        ev = load_evidence(ctx.run_dir, history)
        violations: list[dict[str, Any]] = []
        contracts = 0
        for e in ev.events:
            if e.get("event") != "reconfig_committed" or e.get("op") != "contract":
                continue
            confirmed = e.get("remaining_confirmed")
            commit = e.get("commit")
            if not isinstance(confirmed, dict) or not isinstance(commit, int):
                continue
            contracts += 1
            holders = sorted(n for n, off in confirmed.items() if isinstance(off, int) and off >= commit)
            need = holders_needed(len(confirmed))
            if len(holders) >= need:
                continue
            offsets = ", ".join(f"{n}: {off}" for n, off in sorted(confirmed.items()))
            violations.append({
                "rule": "contract left committed entries on a minority", "tablet": e.get("tablet"),
                "leader": e.get("source"), "removed": e.get("old"), "epoch": e.get("epoch"), "commit": commit,
                "holders": holders, "needed": need, "at_ns": ev.history_ns(float(e.get("ts", 0))),
                "explanation": f"Leader {e.get('source')} of tablet {e.get('tablet')} removed {e.get('old')} at epoch "
                f"{e.get('epoch')} with commit index {commit}, but only {len(holders)} of the {len(confirmed)} "
                f"remaining members had confirmed it (confirmed offsets {offsets}); a majority is {need}. "
                f"Committed entries up to {commit} were left on a minority of the new ensemble."})
        return trace_verdict({"contracts": contracts}, violations, bool(ev.events), "contracts",
                             f"All {contracts} contracts kept the commit index on a majority.")
