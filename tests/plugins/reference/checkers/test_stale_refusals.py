"""The stale-refusals checker: a replica refuses a request as stale only when it is older, judged on the
refusals that real replicas give."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fencepost_reference.checkers.stale_refusals import StaleRefusalsChecker

from harness.checker_protocol import CheckContext
from tests.plugins.reference.checkers.event_runs import node_runs
from tests.plugins.reference.checkers.replica_answers import answer as refusal

T0 = 1_700_000_000.0


def failed(event: str, error: str | None, ts: float) -> dict[str, object]:
    return {"ts": ts, "node": "n2", "event": event, "operator": "op1", "tablet": 0, "error": error}


def check(tmp_path: Path, events: list[dict[str, object]]) -> dict[str, Any]:
    return StaleRefusalsChecker().check([], CheckContext(run_dir=node_runs(tmp_path / "run", events, T0)))


def test_refusals_of_older_requests_are_valid(tmp_path: Path) -> None:
    events = [failed("tombstone_failed", refusal(tmp_path, "d", 5, "fenced", lambda r: r.delete(4)), T0 + 1),
              failed("fence_failed", refusal(tmp_path, "f1", 5, "fenced", lambda r: r.fence(4)), T0 + 2),
              failed("fence_failed", refusal(tmp_path, "f2", 5, "follower", lambda r: r.fence(5)), T0 + 3),
              failed("fence_failed", "wrong_node: request for 'x' reached node n2 (y)", T0 + 4)]
    result = check(tmp_path, events)
    assert result["valid"] is True and result["stale_refusals"] == 3


def test_a_delete_refused_at_a_newer_epoch_is_invalid(tmp_path: Path) -> None:
    # What the mutant `replica.py:ReplaceComparisonOperator_Lt_NotEq:3` answers (`epoch != self.epoch`): an
    # operator's delete of a removed member, at the tablet's newer epoch, is refused, and no tombstone is made.
    refused = "stale_epoch: delete at epoch 7, replica is at 6"
    result = check(tmp_path, [failed("tombstone_failed", refused, T0 + 2.5)])
    assert result["valid"] is False and result["first_anomaly_s"] == 2.5
    assert [(v["request"], v["epoch"], v["replica_epoch"]) for v in result["violations"]] == [("delete", 7, 6)]


def test_a_repeat_of_the_fence_that_fenced_a_replica_refused_is_invalid(tmp_path: Path) -> None:
    # What the mutant `rules.py:ReplaceComparisonOperator_Eq_IsNot:2` answers (`is not` for `==`): the
    # election's second fence at epoch 4 is refused by the replica that its first fence fenced.
    assert refusal(tmp_path, "f", 4, "fenced", lambda r: r.fence(4)) is None  # a real replica accepts it
    result = check(tmp_path, [failed("fence_failed", "stale_epoch: fence for epoch 4, replica is at 4 (fenced)",
                                     T0 + 1)])
    assert result["valid"] is False and result["violations"][0]["request"] == "fence"


def test_a_prepare_refused_at_a_newer_epoch_is_invalid(tmp_path: Path) -> None:
    result = check(tmp_path, [failed("reconfig_failed", "RpcError: stale_epoch: reconfig epoch 9 is not above 8",
                                     T0 + 1)])
    assert result["valid"] is False


def test_no_event_logs_is_unknown(tmp_path: Path) -> None:
    assert StaleRefusalsChecker().check([], CheckContext(run_dir=tmp_path))["valid"] == "unknown"
