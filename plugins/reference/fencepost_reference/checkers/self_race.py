"""The self-race checker (white box): an operator runs one action, and one election, of a tablet at a time.

The control plane changes a tablet's record by compare-and-set, so two operators may race and one loses:
that is planned for. One operator racing itself is not. Each operator keeps at most one action per
tablet in flight (the reconfiguration API refuses a second one as ``busy``); one that starts a second
election while its first is still running has lost track of its own work: the two fence the ensemble at
two epochs, and the first fails or loses its final compare-and-set to the second. Every fault it meets meanwhile
meets a control plane that fights itself instead of repairing the tablet.

Evidence, from the operators' event logs: ``election_started`` (operator, tablet, epoch) and its end at
that epoch, ``election_done``, ``election_failed`` or ``election_lost_race``. An election that ended after
the same operator had started a newer election of that tablet, between its own start and its end, ran
beside it (an election whose operator died never ends, so it cannot).

Every action an operator's loop starts on a tablet (an election, a step of a migration, a late join) is
logged too, ``action_started`` (with the coroutine's name, ``action``) and ``action_ended``, both with
the tablet: an action started while the same operator's previous action on that tablet has not ended ran
beside it. Not every overlap reaches an election (a second copy step starts while the first copy runs),
so this sees what the election rule misses. An operator that restarts (``operator_started`` in its own
log) has no action in flight. The checker is unknown without node event logs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from fencepost import CheckContext, Op
from fencepost_reference.checkers.amnesia.evidence import load_evidence, trace_verdict

ENDS = ("election_done", "election_failed", "election_lost_race")
"""The events that end an election that started."""


class SelfRaceChecker:
    """No action, and no election, of a tablet runs beside another of the same tablet by the same operator."""

    name = "self-race"

    def check(self, history: Sequence[Op], ctx: CheckContext) -> dict[str, Any]:
        """Invalid on any election that ran beside its own operator's newer one; unknown without event logs."""
        ev = load_evidence(ctx.run_dir, history)
        started: dict[tuple[Any, Any], list[int]] = {}
        """(operator, tablet) -> the epochs of the elections it started, in order."""
        violations: list[dict[str, Any]] = []
        judged = 0
        for e in ev.events:
            kind, op, t, epoch = e.get("event"), e.get("operator"), e.get("tablet"), e.get("epoch")
            if not isinstance(epoch, int):
                continue
            if kind == "election_started":
                started.setdefault((op, t), []).append(epoch)
            elif kind in ENDS:
                mine = started.get((op, t), [])
                if epoch not in mine:
                    continue  # lost its first compare-and-set: it never started
                judged += 1
                newer = [n for n in mine[mine.index(epoch) + 1:] if n > epoch]
                if newer:
                    violations.append({
                        "rule": "an operator ran two elections of one tablet at once", "operator": op,
                        "tablet": t, "epoch": epoch, "end": kind, "newer": newer,
                        "at_ns": ev.history_ns(float(e.get("ts", 0))),
                        "explanation": f"Operator {op}'s election of tablet {t} at epoch {epoch} ended ({kind}) after "
                        f"{op} itself had started the election at epoch {newer[0]}: it ran two elections of one "
                        f"tablet at once, fencing at two epochs, and fought itself."})
        actions = _overlapping_actions(ev.events, ev.history_ns, violations)
        return trace_verdict({"elections_ended": judged, "actions_started": actions}, violations, bool(ev.events),
                             "elections", f"None of the {judged} elections that ended, and none of the {actions} "
                             "actions started, ran beside another of its operator's on the same tablet.")


def _overlapping_actions(events: Sequence[dict[str, Any]], history_ns: Callable[[float], int | None],
                         violations: list[dict[str, Any]]) -> int:
    """Append a violation for each action started while its operator's previous action on that tablet was
    still running; return how many actions started."""
    running: dict[tuple[Any, Any], dict[str, Any]] = {}
    """(operator, tablet) -> the ``action_started`` event of the action in flight."""
    started = 0
    for e in events:
        kind, op, t = e.get("event"), e.get("operator"), e.get("tablet")
        if kind == "operator_started":
            running = {k: v for k, v in running.items() if k[0] != e.get("node")}
        elif kind == "action_ended":
            running.pop((op, t), None)
        elif kind == "action_started":
            started += 1
            before = running.get((op, t))
            running[(op, t)] = e
            if before is None:
                continue
            since = round(float(e.get("ts", 0)) - float(before.get("ts", 0)), 3)
            violations.append({
                "rule": "an operator ran two actions on one tablet at once", "operator": op, "tablet": t,
                "action": e.get("action"), "beside": before.get("action"),
                "at_ns": history_ns(float(e.get("ts", 0))),
                "explanation": f"Operator {op} started {e.get('action')} on tablet {t} while its own "
                f"{before.get('action')} on that tablet, started {since} s earlier, had not ended: it ran two "
                "actions on one tablet at once and fought itself."})
    return started
