"""The ensemble-changes checker (white box): a reconfiguration changes exactly the members it names.

Invariant: a leader's ensemble changes only through a committed reconfiguration, and each one changes it
by exactly its own operation: a ``contract`` removes ``old``, an ``expand`` adds ``new``, a ``swap``
does both. The ensemble the control plane records when it finishes that reconfiguration (the operator's
``reconfig_done`` for the same tablet and epoch) is the same set. A leader that keeps a member it was told
to remove, or adds one nobody named, counts its commit quorum over another ensemble than the one the next
election fences: the two majorities need not meet, and one more failure can lose acknowledged writes.

The leader logs its ensemble when it takes the lead (``became_leader``) and after each change
(``reconfig_committed``, with ``op``, ``old`` and ``new``). This checker replays each leader's term from
those events, and compares each change with the operator's record of it. A node restart ends what is known
of the terms it led. A black-box checker sees such a change only once a later failure exploits it; the
convergence checker sees it only if no election repaired it before the cluster settled.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fencepost import CheckContext, Op
from fencepost_reference.checkers.amnesia.evidence import load_evidence, trace_verdict


def expected_ensemble(before: Sequence[str], op: str, old: str | None, new: str | None) -> list[str] | None:
    """The ensemble ``op`` leaves when applied to ``before`` (None for an operation this checker does not know)."""
    after = list(before)
    if op in ("contract", "swap"):
        after = [n for n in after if n != old]
    if op in ("expand", "swap") and new is not None and new not in after:
        after.append(new)
    return after if op in ("contract", "swap", "expand") else None


def _members(value: Any) -> list[str] | None:
    return [str(n) for n in value] if isinstance(value, list) else None


class EnsembleChangesChecker:
    """Every committed reconfiguration changes the leader's ensemble by exactly its operation, to the set
    the control plane records."""

    name = "ensemble-changes"

    def check(self, history: Sequence[Op], ctx: CheckContext) -> dict[str, Any]:
        """Invalid on any change that differs from its operation or from the operator's record; unknown
        when the run left no node event logs."""
        ev = load_evidence(ctx.run_dir, history)
        known: dict[tuple[str, Any], list[str]] = {}  # (leader node, tablet) -> its ensemble now
        committed: dict[tuple[Any, Any], tuple[dict[str, Any], list[str]]] = {}  # (tablet, epoch) -> event, ensemble
        violations: list[dict[str, Any]] = []
        changes = 0

        def violation(e: dict[str, Any], rule: str, text: str) -> None:
            violations.append({"rule": rule, "tablet": e.get("tablet"), "epoch": e.get("epoch"),
                               "leader": e.get("source"), "op": e.get("op"), "old": e.get("old"),
                               "new": e.get("new"), "at_ns": ev.history_ns(float(e.get("ts", 0))),
                               "explanation": text})

        for e in ev.events:
            kind, source, tablet = e.get("event"), str(e.get("source")), e.get("tablet")
            members = _members(e.get("ensemble"))
            if kind == "node_started":
                known = {k: v for k, v in known.items() if k[0] != source}
            elif kind == "became_leader" and members is not None:
                known[(source, tablet)] = members
            elif kind == "reconfig_committed" and members is not None:
                after = members
                changes += 1
                committed[(tablet, e.get("epoch"))] = (e, after)
                before = known.get((source, tablet))
                known[(source, tablet)] = after
                if before is None:
                    continue
                want = expected_ensemble(before, str(e.get("op")), e.get("old"), e.get("new"))
                if want is not None and sorted(want) != sorted(after):
                    violation(e, "a reconfiguration changed other members than it named",
                              f"Leader {source} of tablet {tablet} applied {e.get('op')} (old {e.get('old')}, new "
                              f"{e.get('new')}) at epoch {e.get('epoch')} to ensemble {sorted(before)} and "
                              f"replicates to {sorted(after)}; the operation leaves {sorted(want)}.")
            elif kind == "reconfig_done" and members is not None:
                done = committed.get((tablet, e.get("epoch")))
                recorded = members
                if done is not None and sorted(done[1]) != sorted(recorded):
                    leader_event, applied = done
                    violation(leader_event, "the control plane recorded another ensemble than the leader applied",
                              f"At epoch {e.get('epoch')} of tablet {tablet} the operator {source} recorded ensemble "
                              f"{sorted(recorded)} for {e.get('op')}, but leader {leader_event.get('source')} "
                              f"replicates to {sorted(applied)}: elections fence the recorded ensemble, commits "
                              f"count the applied one.")
        return trace_verdict({"changes": changes}, violations, bool(ev.events), "ensemble changes",
                             f"All {changes} committed reconfigurations changed exactly the members they named, "
                             f"to the ensemble the control plane recorded.")
