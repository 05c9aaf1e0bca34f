"""The contract-retry checker: an operator gives a contract up as unsafe only after its retries."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fencepost_reference.checkers.contract_retry import ContractRetryChecker

from harness.checker_protocol import CheckContext
from system.operator.reconfig import COMMIT_RETRY_S
from tests.plugins.reference.checkers.event_runs import node_runs

T0 = 1_700_000_000.0
UNSAFE = "RpcError: contract_not_safe: removing the node would lower the commit index"


def reconfig(event: str, ts: float, epoch: int = 8, error: str | None = None) -> dict[str, Any]:
    e: dict[str, Any] = {"ts": ts, "node": "op1", "event": event, "operator": "op1", "tablet": 2, "epoch": epoch,
                         "op": "contract"}
    if error is not None:
        e["error"] = error
    return e


def check(tmp_path: Path, events: list[dict[str, Any]]) -> dict[str, Any]:
    return ContractRetryChecker().check([], CheckContext(run_dir=node_runs(tmp_path / "run", events, T0)))


def test_a_contract_given_up_after_its_retries_is_valid(tmp_path: Path) -> None:
    events = [reconfig("reconfig_started", T0 + 1),
              reconfig("reconfig_failed", T0 + 1.1 + COMMIT_RETRY_S, error=UNSAFE),
              reconfig("reconfig_started", T0 + 20, epoch=9),  # another failure: the leader was unreachable
              reconfig("reconfig_failed", T0 + 20.5, epoch=9, error="Unreachable: n1")]
    result = check(tmp_path, events)
    assert result["valid"] is True and result["contracts_refused_unsafe"] == 1


def test_a_contract_given_up_at_the_first_refusal_is_invalid(tmp_path: Path) -> None:
    # What the mutant `reconfig.py:ReplaceComparisonOperator_Gt_NotEq:0` does (`!= deadline` for `> deadline`):
    # its operator gave the contract of tablet 2 up 0.04 s after it started, and ran an election instead.
    result = check(tmp_path, [reconfig("reconfig_started", T0 + 1), reconfig("reconfig_failed", T0 + 1.04,
                                                                           error=UNSAFE)])
    assert result["valid"] is False and result["first_anomaly_s"] == 1.04
    assert result["violations"][0]["after_s"] == 0.04


def test_no_event_logs_is_unknown(tmp_path: Path) -> None:
    assert ContractRetryChecker().check([], CheckContext(run_dir=tmp_path))["valid"] == "unknown"
