"""Time to detection: the earliest evidence failing checkers cite, from real checker results."""

from __future__ import annotations

from pathlib import Path

from fencepost_reference.checkers.amnesia.evidence import Evidence
from fencepost_reference.checkers.amnesia.rules import epochs_never_go_down

from checkers.bank import BankChecker
from checkers.linearizable import LinearizableChecker
from harness.checker_protocol import CheckContext, run_checkers
from harness.detection import detection, first_anomaly_s
from harness.history.op import Op
from tests.checkers.histories import sequential


def stale_read_history() -> list[Op]:
    """Key 7 reads a stale 1 (calls 3 and 4, ops 6-7) after 2 was written; 1 s between ops."""
    return sequential((0, "write", 7, 1, "ok", 1), (1, "read", 7, None, "ok", 1), (0, "write", 7, 2, "ok", 2),
                      (1, "read", 7, None, "ok", 1), (0, "write", 7, 3, "ok", 3), step_ns=1_000_000_000)


def test_linearizable_evidence_is_the_stuck_operation(tmp_path: Path) -> None:
    history = stale_read_history()
    result = LinearizableChecker("cas-register").check(history, CheckContext(run_dir=tmp_path))
    assert result["valid"] is False
    t = first_anomaly_s("linearizable", result, {op.index: op.time for op in history})
    assert t is not None
    stale_read = next(op for op in history if op.f == "read" and op.index >= 6)
    assert 0 < t <= stale_read.time / 1e9


def test_only_failing_checkers_count_and_the_earliest_wins(tmp_path: Path) -> None:
    history = stale_read_history()
    results = run_checkers([LinearizableChecker("cas-register"), BankChecker(total=10)], history,
                           CheckContext(run_dir=tmp_path))
    found = detection(results["checkers"], history)
    assert found["checkers"] == ["linearizable"]
    assert found["first_anomaly_s"] == found["by_checker"]["linearizable"]


def test_a_valid_run_has_no_detection() -> None:
    assert detection({"linearizable": {"valid": True}, "perf": {"valid": True}}, []) == {
        "checkers": [], "first_anomaly_s": None, "by_checker": {}}


def test_amnesia_violations_carry_their_time() -> None:
    e = Evidence(start_wall_s=100.0, events=[
        {"source": "n1", "node": "n1", "event": "node_started", "uuid": "u1", "ts": 100.5},
        {"source": "n1", "node": "n1", "event": "fenced", "tablet": 0, "epoch": 4, "ts": 101.0},
        {"source": "n1", "node": "n1", "event": "tablet_loaded", "tablet": 0, "epoch": 2, "ts": 103.25}])
    [v] = epochs_never_go_down([], e)
    assert v["at_ns"] == 3_250_000_000
    assert first_anomaly_s("amnesia", {"valid": False, "first_anomaly_s": 3.25}, {}) == 3.25


def test_cited_indices_and_ns_fields_are_read_from_any_result() -> None:
    times = {5: 2_000_000_000, 9: 4_000_000_000}
    assert first_anomaly_s("bank", {"valid": False, "errors": [{"index": 9}, {"index": 5}]}, times) == 2.0
    assert first_anomaly_s("set", {"valid": False, "examples": {"lost": [{"acked_at_ns": 1_500_000_000}]}},
                           times) == 1.5
    assert first_anomaly_s("log", {"valid": False, "counts": {"lost": 3}}, times) is None
