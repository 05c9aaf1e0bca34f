from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness.checker_protocol import CheckContext, Checker, merge_validity, run_checkers
from harness.history.op import Op, OpType


def test_merge_validity_orders_invalid_unknown_valid() -> None:
    assert merge_validity([]) is True
    assert merge_validity([True, True]) is True
    assert merge_validity([True, "unknown"]) == "unknown"
    assert merge_validity(["unknown", False, True]) is False


class Counting:
    name = "counting"

    def check(self, history: Sequence[Op], ctx: CheckContext) -> dict[str, Any]:
        return {"valid": len(history) > 0, "count": len(history)}


class Crashing:
    name = "crashing"

    def check(self, history: Sequence[Op], ctx: CheckContext) -> dict[str, Any]:
        raise RuntimeError("boom")


def test_a_crashing_checker_becomes_unknown_with_its_error() -> None:
    assert isinstance(Crashing(), Checker)
    history = [Op(0, 0, 0, OpType.INVOKE, "read")]
    out = run_checkers([Counting(), Crashing()], history, CheckContext())
    assert out["valid"] == "unknown"
    assert out["checkers"]["counting"]["count"] == 1
    assert out["checkers"]["crashing"]["error"] == "RuntimeError: boom"
    assert out["checkers"]["crashing"]["valid"] == "unknown"
    assert run_checkers([Counting()], [], CheckContext())["valid"] is False
