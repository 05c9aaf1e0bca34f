"""The migrations checker (white box): the control plane's record of each migration agrees with its ensemble,
and a migration session number is never handed out twice.

Invariants, read from the operators' event logs:
- **Outcome.** A migration ends ``done`` only once its new node is a member of the tablet's ensemble (it was
  promoted by an expand), and ``cancelled`` only while it is not (a cancel drops a catch-up member, closes its
  sessions and tombstones its partial replica, which would take a voter's data). The ensemble is the one the
  operator recorded last for the tablet: ``election_done`` or ``reconfig_done``.
- **Sessions.** The shard record's ``sessions`` counter numbers the migration sessions of a tablet (Scylla's
  topology guards). Each stage's session (``migration_started`` and ``migration_stage``, field ``session``)
  must be higher than every session the tablet had before, and the counter a migration's end leaves
  (``migration_done``/``migration_cancelled``, field ``sessions``) higher still: that end closes the last
  stage's session. A number handed out again lets a barrier that closed the old session fence the new one
  off, or a copy of the old session count as the new one's.

A black-box checker sees neither: a migration recorded with the wrong outcome, or a session number reused,
harms only a later migration of the same tablet, if one races the right step. Logs written before the
events carried session numbers are judged on their outcomes alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fencepost import CheckContext, Op
from fencepost_reference.checkers.amnesia.evidence import load_evidence, trace_verdict

ENSEMBLE_EVENTS = frozenset({"election_done", "reconfig_done"})
STAGE_EVENTS = frozenset({"migration_started", "migration_stage"})
END_EVENTS = frozenset({"migration_done", "migration_cancelled"})


class MigrationsChecker:
    """Every migration ends as its ensemble says, and no session number is used twice."""

    name = "migrations"

    def check(self, history: Sequence[Op], ctx: CheckContext) -> dict[str, Any]:
        """Invalid on a migration whose outcome contradicts the recorded ensemble, or on a session number that
        does not exceed every earlier one of its tablet; unknown when the run left no event logs."""
        ev = load_evidence(ctx.run_dir, history)
        ensemble: dict[Any, list[str]] = {}  # tablet -> the operator's last recorded ensemble
        highest: dict[Any, int] = {}  # tablet -> the highest session number handed out (or counter left)
        violations: list[dict[str, Any]] = []
        ended = 0

        def violation(e: dict[str, Any], rule: str, text: str) -> None:
            violations.append({"rule": rule, "tablet": e.get("tablet"), "operator": e.get("source"),
                               "event": e.get("event"), "new": e.get("new"), "stage": e.get("stage"),
                               "at_ns": ev.history_ns(float(e.get("ts", 0))), "explanation": text})

        for e in ev.events:
            kind, tablet = e.get("event"), e.get("tablet")
            if e.get("node") != e.get("source") or tablet is None:
                continue  # only what an operator logged about its own actions
            if kind in ENSEMBLE_EVENTS and isinstance(e.get("ensemble"), list):
                ensemble[tablet] = [str(n) for n in e["ensemble"]]
                continue
            number = e.get("session") if kind in STAGE_EVENTS else e.get("sessions") if kind in END_EVENTS else None
            if isinstance(number, int):
                if tablet in highest and number <= highest[tablet]:
                    what = "session" if kind in STAGE_EVENTS else "session counter it left"
                    violation(e, "a migration session number was handed out again",
                              f"Operator {e.get('source')} logged {kind} of tablet {tablet} (new {e.get('new')}) with "
                              f"{what} {number}, but the tablet had already had session {highest[tablet]}: a "
                              f"barrier that closed the earlier session fences this one too, and a copy of the "
                              f"earlier one passes for it.")
                highest[tablet] = max(number, highest.get(tablet, number))
            if kind not in END_EVENTS:
                continue
            ended += 1
            members = ensemble.get(tablet)
            new = str(e.get("new"))
            if members is None:
                continue
            if kind == "migration_done" and new not in members:
                violation(e, "a migration ended done without its new node in the ensemble",
                          f"Operator {e.get('source')} logged the migration of tablet {tablet} to {new} done at stage "
                          f"{e.get('stage')}, but the ensemble it recorded last is {sorted(members)}: the tablet "
                          f"has one replica fewer than its placement says.")
            elif kind == "migration_cancelled" and new in members:
                violation(e, "a migration was cancelled after its new node became a member",
                          f"Operator {e.get('source')} logged the migration of tablet {tablet} to {new} cancelled at "
                          f"stage {e.get('stage')}, but {new} is in the ensemble it recorded last, "
                          f"{sorted(members)}: a cancel tombstones the new node's replica, a voter's data.")
        return trace_verdict({"migrations": ended}, violations, bool(ev.events), "migrations",
                             f"All {ended} migrations ended as their ensembles say, and no session number was "
                             f"handed out twice.")
