"""The migrations checker, on migration events that operators really logged.

``CLEAN`` is tablet 0 of the clean default campaign (``fencepost test --seed 1 --time-limit 30``, with the
session numbers the events now carry); ``CANCELLED`` a migration the clean default campaign at seed 1 really
cancelled (5a45a3c, before the events carried session numbers); ``MUTANT`` the mutation run of
``system/operator/migration.py:AddNot:20``, whose operator logs a finished migration as cancelled; ``COUNTED_DOWN``
tablet 2 of the mutation run of ``ReplaceBinaryOperator_Add_Sub:2`` (75a152b), whose migration's end counts the
session counter down, so that the next migration is handed session 4 again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fencepost_reference.checkers.migrations import MigrationsChecker

from harness.checker_protocol import CheckContext

from .event_runs import node_runs

START = 1795774043.1156504
CLEAN: list[dict[str, Any]] = [
    {"ts": 1795774044.190259, "node": "op1", "event": "election_done", "operator": "op1", "tablet": 0, "epoch": 1,
     "leader": "n2", "ensemble": ["n1", "n2", "n3"], "followers": ["n3"]},
    {"ts": 1795774048.933787, "node": "op1", "event": "reconfig_done", "operator": "op1", "tablet": 0, "epoch": 2,
     "op": "contract", "ensemble": ["n1", "n2"]},
    {"ts": 1795774049.305863, "node": "op1", "event": "migration_started", "operator": "op1", "tablet": 0,
     "new": "n3~2", "old": None, "session": 1},
    {"ts": 1795774049.815225, "node": "op1", "event": "migration_stage", "operator": "op1", "tablet": 0,
     "new": "n3~2", "stage": "copy", "previous": "pre_voter", "session": 2},
    {"ts": 1795774054.188852, "node": "op1", "event": "migration_stage", "operator": "op1", "tablet": 0,
     "new": "n3~2", "stage": "promote", "previous": "copy", "session": 3},
    {"ts": 1795774054.702682, "node": "op1", "event": "reconfig_done", "operator": "op1", "tablet": 0, "epoch": 3,
     "op": "expand", "ensemble": ["n1", "n2", "n3~2"]},
    {"ts": 1795774055.192373, "node": "op1", "event": "migration_stage", "operator": "op1", "tablet": 0,
     "new": "n3~2", "stage": "contract", "previous": "promote", "session": 4},
    {"ts": 1795774056.010034, "node": "op1", "event": "migration_done", "operator": "op1", "tablet": 0,
     "new": "n3~2", "old": None, "stage": "contract", "sessions": 5},
]
CANCELLED_START = 1795766309.130388
CANCELLED: list[dict[str, Any]] = [
    {"ts": 1795766330.279327, "node": "op1", "event": "reconfig_done", "operator": "op1", "tablet": 1, "epoch": 5,
     "op": "contract", "ensemble": ["n4", "n3~2"]},
    {"ts": 1795766330.620967, "node": "op1", "event": "migration_started", "operator": "op1", "tablet": 1,
     "new": "n2", "old": None},
    {"ts": 1795766332.476021, "node": "op1", "event": "migration_stage", "operator": "op1", "tablet": 1,
     "new": "n2", "stage": "promote", "previous": "copy"},
    {"ts": 1795766334.453947, "node": "op1", "event": "election_done", "operator": "op1", "tablet": 1, "epoch": 6,
     "leader": "n4", "ensemble": ["n4", "n3~2"], "followers": ["n3~2"]},
    {"ts": 1795766334.9104, "node": "op1", "event": "migration_cancelled", "operator": "op1", "tablet": 1,
     "new": "n2", "old": None, "stage": "promote"},
]
MUTANT_START = 1795768511.6341298
MUTANT: list[dict[str, Any]] = [
    {"ts": 1795768518.374962, "node": "op1", "event": "reconfig_done", "operator": "op1", "tablet": 1, "epoch": 2,
     "op": "contract", "ensemble": ["n2", "n4"]},
    {"ts": 1795768518.829671, "node": "op1", "event": "migration_started", "operator": "op1", "tablet": 1,
     "new": "n3~2", "old": None},
    {"ts": 1795768524.111558, "node": "op1", "event": "reconfig_done", "operator": "op1", "tablet": 1, "epoch": 3,
     "op": "expand", "ensemble": ["n2", "n4", "n3~2"]},
    {"ts": 1795768524.754425, "node": "op1", "event": "migration_stage", "operator": "op1", "tablet": 1,
     "new": "n3~2", "stage": "contract", "previous": "promote"},
    {"ts": 1795768525.142055, "node": "op1", "event": "migration_cancelled", "operator": "op1", "tablet": 1,
     "new": "n3~2", "old": None, "stage": "contract"},
]


COUNTED_DOWN_START = 1795774945.561959
COUNTED_DOWN: list[dict[str, Any]] = [
    {"ts": 1795774952.71168, "node": "op1", "event": "reconfig_done", "operator": "op1", "tablet": 2, "epoch": 3,
     "op": "contract", "ensemble": ["n4", "n1"]},
    {"ts": 1795774956.61791, "node": "op1", "event": "migration_started", "operator": "op1", "tablet": 2,
     "new": "n3~2", "old": None, "session": 1},
    {"ts": 1795774957.087105, "node": "op1", "event": "migration_stage", "operator": "op1", "tablet": 2,
     "new": "n3~2", "stage": "copy", "previous": "pre_voter", "session": 2},
    {"ts": 1795774958.829221, "node": "op1", "event": "migration_stage", "operator": "op1", "tablet": 2,
     "new": "n3~2", "stage": "promote", "previous": "copy", "session": 3},
    {"ts": 1795774959.695422, "node": "op1", "event": "reconfig_done", "operator": "op1", "tablet": 2, "epoch": 4,
     "op": "expand", "ensemble": ["n4", "n1", "n3~2"]},
    {"ts": 1795774960.260377, "node": "op1", "event": "migration_stage", "operator": "op1", "tablet": 2,
     "new": "n3~2", "stage": "contract", "previous": "promote", "session": 4},
    {"ts": 1795774960.711989, "node": "op1", "event": "migration_done", "operator": "op1", "tablet": 2,
     "new": "n3~2", "old": None, "stage": "contract", "sessions": 3},
    {"ts": 1795774988.615582, "node": "op1", "event": "reconfig_done", "operator": "op1", "tablet": 2, "epoch": 6,
     "op": "contract", "ensemble": ["n4", "n1"]},
    {"ts": 1795774989.084056, "node": "op1", "event": "migration_started", "operator": "op1", "tablet": 2,
     "new": "n3~2", "old": None, "session": 4},
]


def check(run: Path) -> dict[str, Any]:
    return MigrationsChecker().check([], CheckContext(run_dir=run))


def test_a_real_migration_and_a_real_cancel_are_valid(tmp_path: Path) -> None:
    clean = check(node_runs(tmp_path / "clean", CLEAN, START))
    cancelled = check(node_runs(tmp_path / "cancelled", CANCELLED, CANCELLED_START))
    assert (clean["valid"], clean["migrations"]) == (True, 1)
    assert (cancelled["valid"], cancelled["migrations"]) == (True, 1)


def test_a_finished_migration_logged_as_cancelled_is_invalid(tmp_path: Path) -> None:
    result = check(node_runs(tmp_path, MUTANT, MUTANT_START))
    assert result["valid"] is False
    [v] = result["violations"]
    assert (v["rule"], v["new"], v["stage"]) == ("a migration was cancelled after its new node became a member",
                                                 "n3~2", "contract")
    assert result["first_anomaly_s"] == round(1795768525.142055 - MUTANT_START, 3)


def test_a_cancelled_migration_logged_as_done_is_invalid(tmp_path: Path) -> None:
    """The same mutant's other half: the real cancel above, logged as done."""
    events = [*CANCELLED[:-1], {**CANCELLED[-1], "event": "migration_done"}]
    result = check(node_runs(tmp_path, events, CANCELLED_START))
    assert [v["rule"] for v in result["violations"]] == ["a migration ended done without its new node in the ensemble"]


def test_a_session_counter_that_goes_back_at_the_end_is_invalid(tmp_path: Path) -> None:
    result = check(node_runs(tmp_path, COUNTED_DOWN, COUNTED_DOWN_START))
    assert [(v["event"], v["rule"]) for v in result["violations"]] == [
        ("migration_done", "a migration session number was handed out again"),
        ("migration_started", "a migration session number was handed out again")]
    assert result["first_anomaly_s"] == round(1795774960.711989 - COUNTED_DOWN_START, 3)


def test_sessions_are_judged_per_tablet(tmp_path: Path) -> None:
    other = [{**e, "tablet": 1, "ts": e["ts"] + 0.001} for e in CLEAN]
    assert check(node_runs(tmp_path, CLEAN + other, START))["valid"] is True


def test_no_event_logs_is_unknown(tmp_path: Path) -> None:
    assert check(tmp_path)["valid"] == "unknown"
