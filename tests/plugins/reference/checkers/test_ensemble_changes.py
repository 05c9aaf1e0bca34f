"""The ensemble-changes checker, on reconfiguration events that leaders and operators really logged.

``CLEAN`` comes from the clean default campaign (``fencepost test --seed 2 --time-limit 30``, 5bec6c4);
``MUTANT`` from the mutation sample's run of ``system/leader.py:AddNot:40`` (the leader applies a contract
as an expand and an expand as a contract), whose operator recorded the ensembles the operations leave.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fencepost_reference.checkers.ensemble_changes import EnsembleChangesChecker, expected_ensemble

from harness.checker_protocol import CheckContext

from .event_runs import node_runs

START = 1795761952.856981
CLEAN: list[dict[str, Any]] = [
    {"ts": 1795761954.003906, "node": "n2", "event": "became_leader", "tablet": 0, "epoch": 1, "head": [-1, -1],
     "followers": {"n3": [-1, -1]}, "ensemble": ["n1", "n2", "n3"]},
    {"ts": 1795761957.18119, "node": "n2", "event": "reconfig_committed", "tablet": 0, "epoch": 2, "op": "contract",
     "old": "n1", "new": None, "ensemble": ["n2", "n3"], "commit": 0, "remaining_confirmed": {"n2": 2, "n3": 0}},
    {"ts": 1795761957.182801, "node": "op1", "event": "reconfig_done", "operator": "op1", "tablet": 0, "epoch": 2,
     "op": "contract", "ensemble": ["n2", "n3"]},
    {"ts": 1795761961.54065, "node": "n2", "event": "reconfig_committed", "tablet": 0, "epoch": 3, "op": "expand",
     "old": None, "new": "n1", "ensemble": ["n2", "n3", "n1"]},
    {"ts": 1795761961.552362, "node": "op2", "event": "reconfig_done", "operator": "op2", "tablet": 0, "epoch": 3,
     "op": "expand", "ensemble": ["n2", "n3", "n1"]},
]
MUTANT_START = 1795755312.0
MUTANT: list[dict[str, Any]] = [
    {"ts": 1795755313.083251, "node": "n2", "event": "became_leader", "tablet": 1, "epoch": 1, "head": [-1, -1],
     "followers": {"n3": [-1, -1]}, "ensemble": ["n2", "n3", "n4"]},
    {"ts": 1795755317.61843, "node": "n2", "event": "reconfig_committed", "tablet": 1, "epoch": 2, "op": "contract",
     "old": "n3", "new": None, "ensemble": ["n2", "n3", "n4"]},
    {"ts": 1795755317.626813, "node": "op1", "event": "reconfig_done", "operator": "op1", "tablet": 1, "epoch": 2,
     "op": "contract", "ensemble": ["n2", "n4"]},
]


@pytest.mark.parametrize(("op", "old", "new", "after"), [
    ("contract", "b", None, ["a", "c"]), ("expand", None, "d", ["a", "b", "c", "d"]),
    ("swap", "b", "d", ["a", "c", "d"]), ("swap", "b", "c", ["a", "c"]), ("contract", "z", None, ["a", "b", "c"]),
    ("merge", None, None, None)])
def test_each_operation_leaves_the_ensemble_it_names(op: str, old: str | None, new: str | None,
                                                    after: list[str] | None) -> None:
    assert expected_ensemble(["a", "b", "c"], op, old, new) == after


def test_the_clean_runs_changes_pass(tmp_path: Path) -> None:
    result = EnsembleChangesChecker().check([], CheckContext(run_dir=node_runs(tmp_path, CLEAN, START)))
    assert result["valid"] is True and result["changes"] == 2, result


def test_a_contract_that_kept_its_member_is_caught_twice(tmp_path: Path) -> None:
    result = EnsembleChangesChecker().check([], CheckContext(run_dir=node_runs(tmp_path, MUTANT, MUTANT_START)))
    assert result["valid"] is False
    rules = [v["rule"] for v in result["violations"]]
    assert rules == ["a reconfiguration changed other members than it named",
                     "the control plane recorded another ensemble than the leader applied"]
    assert "the operation leaves ['n2', 'n4']" in result["explanation"]
    assert result["first_anomaly_s"] == round(1795755317.61843 - MUTANT_START, 3)


def test_a_swap_that_kept_the_old_member_is_caught(tmp_path: Path) -> None:
    """What ``system/leader.py:AddNot:43`` does: the swap adds the new member and keeps the old one."""
    events = [CLEAN[0], {**CLEAN[1], "op": "swap", "old": "n1", "new": "n4", "ensemble": ["n1", "n2", "n3", "n4"]}]
    result = EnsembleChangesChecker().check([], CheckContext(run_dir=node_runs(tmp_path, events, START)))
    assert result["valid"] is False and "leaves ['n2', 'n3', 'n4']" in result["explanation"]


def test_a_restart_forgets_the_term_and_no_logs_is_unknown(tmp_path: Path) -> None:
    restart = {"ts": 1795761955.0, "node": "n2", "event": "node_started", "member": "n2"}
    wrong = {**CLEAN[1], "ensemble": ["n1", "n2", "n3"]}
    run = node_runs(tmp_path / "a", [CLEAN[0], restart, wrong], START)
    result = EnsembleChangesChecker().check([], CheckContext(run_dir=run))
    assert result["valid"] is True, result
    assert EnsembleChangesChecker().check([], CheckContext(run_dir=tmp_path / "empty"))["valid"] == "unknown"
