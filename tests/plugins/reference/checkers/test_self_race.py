"""The self-race checker: an operator's election of a tablet never runs beside a newer one of its own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fencepost_reference.checkers.self_race import SelfRaceChecker

from harness.checker_protocol import CheckContext
from tests.plugins.reference.checkers.event_runs import node_runs

T0 = 1_700_000_000.0


def ev(dt: float, kind: str, operator: str, epoch: int, tablet: int = 0) -> dict[str, Any]:
    return {"ts": T0 + dt, "node": operator, "event": kind, "operator": operator, "tablet": tablet, "epoch": epoch}


def check(tmp_path: Path, events: list[dict[str, Any]]) -> dict[str, Any]:
    return SelfRaceChecker().check([], CheckContext(run_dir=node_runs(tmp_path, events, T0)))


def test_races_between_operators_and_of_other_tablets_are_valid(tmp_path: Path) -> None:
    events = [ev(1, "election_started", "op1", 1), ev(1.1, "election_started", "op2", 2),
              ev(1.2, "election_lost_race", "op1", 1),  # op2 won: two operators, as planned
              ev(2, "election_lost_race", "op1", 3),  # lost its first compare-and-set: it never started
              ev(3, "election_started", "op1", 4), ev(3.1, "election_started", "op1", 5, tablet=1),
              ev(3.2, "election_lost_race", "op1", 4),  # another tablet's election is no race with this one
              ev(4.2, "election_started", "op2", 7), ev(4.3, "election_lost_race", "op2", 7)]
    result = check(tmp_path, events)
    assert result["valid"] is True and result["elections_ended"] == 3


def test_an_election_that_lost_to_its_own_operator_is_invalid(tmp_path: Path) -> None:
    # What the mutant `control.py:ReplaceOrWithAnd:6` did at 1.07 s: a second election while the first ran.
    events = [ev(0.3, "election_started", "op1", 1), ev(0.31, "election_started", "op1", 2),
              ev(0.36, "election_lost_race", "op1", 1), ev(0.41, "election_done", "op1", 2)]
    result = check(tmp_path, events)
    assert result["valid"] is False and result["first_anomaly_s"] == 0.36
    assert [(v["operator"], v["epoch"], v["newer"]) for v in result["violations"]] == [("op1", 1, [2])]


def test_an_election_that_failed_beside_its_own_operators_newer_one_is_invalid(tmp_path: Path) -> None:
    # The same mutant in another run: the older election's leader refused, since the newer had fenced it.
    events = [ev(0.35, "election_started", "op1", 1), ev(0.72, "election_started", "op1", 2),
              ev(0.8, "election_failed", "op1", 1), ev(0.96, "election_done", "op1", 2)]
    result = check(tmp_path, events)
    assert result["valid"] is False and result["first_anomaly_s"] == 0.8
    assert [(v["epoch"], v["end"]) for v in result["violations"]] == [(1, "election_failed")]


def act(dt: float, kind: str, operator: str, tablet: int = 0, action: str = "step") -> dict[str, Any]:
    return {"ts": T0 + dt, "node": operator, "event": kind, "operator": operator, "tablet": tablet, "action": action}


def test_actions_one_at_a_time_per_operator_and_tablet_are_valid(tmp_path: Path) -> None:
    events = [act(1, "action_started", "op1", action="elect"), act(1.1, "action_started", "op1", tablet=1),
              act(1.2, "action_started", "op2"),  # another operator: a race it may lose, as planned
              act(1.3, "action_ended", "op1"), act(1.4, "action_started", "op1", action="step"),
              act(1.5, "action_ended", "op1"), act(1.6, "action_ended", "op1", tablet=1),
              act(2.0, "action_started", "op1"),  # op1 is killed with this in flight ...
              {"ts": T0 + 3, "node": "op1", "event": "operator_started", "pid": 2},
              act(3.1, "action_started", "op1")]  # ... and its new process has nothing in flight
    result = check(tmp_path, events)
    assert result["valid"] is True and result["actions_started"] == 6, result


def test_an_action_started_beside_its_operators_own_on_that_tablet_is_invalid(tmp_path: Path) -> None:
    # What the mutant `control.py:ReplaceOrWithAnd:6` did at seed 1 in the sample at a040120, where no
    # election overlapped: a second copy step of tablet 1 started while the first was copying (the node
    # refused it `already_in_progress`).
    events = [act(32.08, "action_started", "op1", tablet=1, action="step"),
              act(32.6, "action_started", "op1", tablet=1, action="step"),
              act(33.43, "action_ended", "op1", tablet=1), act(36.0, "action_ended", "op1", tablet=1)]
    result = check(tmp_path, events)
    assert result["valid"] is False and result["first_anomaly_s"] == 32.6, result
    assert [(v["operator"], v["tablet"], v["beside"]) for v in result["violations"]] == [("op1", 1, "step")]
    assert "started 0.52 s earlier" in result["explanation"]
