"""The admin-API checker: a fault's admin request answered as unknown, malformed or failed in a handler."""

from __future__ import annotations

from typing import Any

from fencepost_reference.checkers.admin_api import AdminApiChecker

from harness.checker_protocol import CheckContext
from harness.history.op import NEMESIS, Op, OpType
from system.wire import RpcError


def nemesis(index: int, f: str, value: Any = None, error: Any = None, kind: OpType = OpType.INFO) -> Op:
    return Op(index=index, time=index * 1000, process=NEMESIS, type=kind, f=f, value=value, error=error)


def test_planned_refusals_and_answers_are_valid() -> None:
    history = [nemesis(0, "start-membership", {"target": "swap"}, kind=OpType.INVOKE),
               nemesis(1, "start-membership", {"target": "swap", "refused": str(RpcError("busy", "tablet 1"))}),
               nemesis(2, "start-stalled-swap", {"refused": ["tablet 1 to n1: reconfig_failed: tablet_deleted: x"]}),
               nemesis(3, "start-kill", error="TimeoutError: ")]
    result = AdminApiChecker().check(history, CheckContext())
    assert result["valid"] is True and result["faults"] == 3


def test_a_method_the_server_no_longer_serves_is_invalid() -> None:
    # The operator's reply to a swap when its dispatch lost `reconfig` (the mutant control.py:Eq_NotEq:8).
    refused = str(RpcError("unknown_method", "no method 'reconfig'"))
    history = [nemesis(0, "start-stalled-swap", {"refused": [f"tablet 2 to n4: {refused}"]}),
               nemesis(1, "start-membership", error=f"RpcError: {RpcError('internal', 'KeyError: tablet')}"),
               nemesis(2, "start-membership", {"target": "swap", "refused": refused}, kind=OpType.INVOKE)]
    result = AdminApiChecker().check(history, CheckContext())
    assert result["valid"] is False
    assert [(v["index"], v["reply"]) for v in result["violations"]] == [
        (0, "unknown_method: no method 'reconfig'"), (1, "internal: KeyError: tablet")]
