"""The leader-completeness checker (white box): every new leader holds every entry already committed.

Leader completeness is the election's safety property (Raft's, and Oxia's reason for choosing the fenced
node with the highest head): an entry committed in one epoch is in the log of every later leader.
Each node logs its head and commit index when it is fenced for an election (``fenced``), and the winner
logs its head when it takes the lead (``became_leader``). A node fenced for that epoch that had already
committed an offset beyond the new leader's head shows a leader missing committed entries. A follower
asked to truncate below its commit index refuses and logs ``truncate_refused``: the same evidence,
seen from the follower.

Followers that refuse keep the data, so a bad election may cost availability rather than acknowledged
writes; this checker reports it either way, with the heads and commit indexes involved.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fencepost import CheckContext, Op
from fencepost_reference.checkers.amnesia.evidence import load_evidence, trace_verdict


class LeaderCompletenessChecker:
    """No leader takes over without every entry a fenced node had committed."""

    name = "leader-completeness"

    def check(self, history: Sequence[Op], ctx: CheckContext) -> dict[str, Any]:
        """Invalid on any leader missing committed entries; unknown when there are no node logs."""
        ev = load_evidence(ctx.run_dir, history)
        fenced: dict[tuple[Any, Any], dict[str, tuple[int, dict[str, Any]]]] = {}
        violations: list[dict[str, Any]] = []
        elections = 0
        for e in ev.events:
            node, kind = str(e.get("source")), e.get("event")
            if e.get("node") != node:
                continue  # an operator's event about a node
            key = (e.get("tablet"), e.get("epoch"))
            if kind == "fenced" and isinstance(e.get("commit"), int):
                fenced.setdefault(key, {})[node] = (int(e["commit"]), e)
            elif kind == "became_leader" and isinstance(e.get("head"), list) and len(e["head"]) == 2:
                elections += 1
                head_off = int(e["head"][1])
                behind = {n: c for n, (c, _) in fenced.get(key, {}).items() if c > head_off}
                if behind:
                    commits = ", ".join(f"{n} had committed offset {c}" for n, c in sorted(behind.items()))
                    violations.append(self._violation(
                        ev, e, node, f"Node {node} became leader of tablet {e.get('tablet')} at epoch "
                        f"{e.get('epoch')} with head {e['head']}, but among the nodes fenced for that election "
                        f"{commits}: the new leader lacks committed entries (a correct election picks the "
                        f"fenced node with the highest head).", behind=behind, head=e["head"]))
            elif kind == "truncate_refused":
                violations.append(self._violation(
                    ev, e, node, f"Node {node} refused to truncate tablet {e.get('tablet')} to {e.get('point')} "
                    f"below its commit index {e.get('commit')}: its leader asked it to drop committed entries.",
                    point=e.get("point"), commit=e.get("commit")))
        return trace_verdict({"elections": elections}, violations, bool(ev.events), "elections",
                             f"All {elections} new leaders held every entry their fenced nodes had committed.")

    @staticmethod
    def _violation(ev: Any, e: dict[str, Any], node: str, explanation: str, **facts: Any) -> dict[str, Any]:
        return {"rule": e.get("event"), "node": node, "tablet": e.get("tablet"), "epoch": e.get("epoch"),
                "at_ns": ev.history_ns(float(e.get("ts", 0))), "explanation": explanation, **facts}
