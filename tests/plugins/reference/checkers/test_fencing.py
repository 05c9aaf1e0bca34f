"""The fencing checker: a fence at an epoch never reaches the node that leads that epoch, on refusals that
real replicas give."""

from __future__ import annotations

from pathlib import Path

from fencepost_reference.checkers.fencing import FencingChecker

from harness.checker_protocol import CheckContext
from tests.plugins.reference.checkers.event_runs import node_runs
from tests.plugins.reference.checkers.replica_answers import answer

T0 = 1_700_000_000.0


def refusal(tmp_path: Path, status: str, at: int, fence: int) -> str:
    """What a real replica at epoch ``at`` answers a fence for epoch ``fence`` once its status is ``status``
    (as becoming leader or following leaves it)."""
    refused = answer(tmp_path, f"{status}-{at}-{fence}", at, status, lambda r: r.fence(fence))
    if refused is None:
        raise AssertionError("the fence was accepted")
    return refused


def fence_failed(error: str, epoch: int, ts: float) -> dict[str, object]:
    return {"ts": ts, "node": "n2", "event": "fence_failed", "operator": "op1", "tablet": 0, "epoch": epoch,
            "error": error}


def test_refusals_by_followers_and_newer_leaders_are_valid(tmp_path: Path) -> None:
    events = [fence_failed(refusal(tmp_path, "follower", 3, 3), 3, T0 + 1),  # a late join of a member
              fence_failed(refusal(tmp_path, "leader", 4, 3), 3, T0 + 2),  # a stale operator's election
              fence_failed("wrong_node: request for 'x' reached node n2 (y)", 3, T0 + 3)]
    result = FencingChecker().check([], CheckContext(run_dir=node_runs(tmp_path / "run", events, T0)))
    assert result["valid"] is True and result["fences_refused"] == 2


def test_a_fence_that_reaches_the_leader_of_its_own_epoch_is_invalid(tmp_path: Path) -> None:
    # What the mutant `control.py:ReplaceComparisonOperator_Eq_Is:4` does: it takes the leader for a laggard.
    events = [fence_failed(refusal(tmp_path, "follower", 3, 3), 3, T0 + 1),
              fence_failed(refusal(tmp_path, "leader", 3, 3), 3, T0 + 2.5)]
    result = FencingChecker().check([], CheckContext(run_dir=node_runs(tmp_path / "run", events, T0)))
    assert result["valid"] is False and result["first_anomaly_s"] == 2.5
    assert [(v["node"], v["epoch"]) for v in result["violations"]] == [("n2", 3)]


def test_no_event_logs_is_unknown(tmp_path: Path) -> None:
    assert FencingChecker().check([], CheckContext(run_dir=tmp_path))["valid"] == "unknown"
