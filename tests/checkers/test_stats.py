from __future__ import annotations

from checkers.stats import StatsChecker, count_outcomes
from harness.checker_protocol import CheckContext
from harness.history.op import Op, OpType


def _ops(*spec: tuple[int, str, str]) -> list[Op]:
    """(process, type, f) triples, one op each, in order."""
    return [Op(i, i * 10, p, OpType(t), f) for i, (p, t, f) in enumerate(spec)]


def test_counts_each_outcome_per_function_and_unfinished_calls_as_info() -> None:
    history = _ops((0, "invoke", "read"), (0, "ok", "read"), (1, "invoke", "write"), (1, "fail", "write"),
                   (2, "invoke", "write"), (2, "ok", "write"), (3, "invoke", "read"))
    assert count_outcomes(history) == {
        "read": {"ok": 1, "fail": 0, "info": 1, "count": 2},
        "write": {"ok": 1, "fail": 1, "info": 0, "count": 2},
    }
    result = StatsChecker().check(history, CheckContext())
    assert result["valid"] is True
    assert (result["ok"], result["fail"], result["info"], result["count"], result["ops"]) == (2, 1, 1, 4, 7)


def test_a_function_that_never_succeeded_makes_the_result_unknown() -> None:
    history = _ops((0, "invoke", "read"), (0, "ok", "read"), (1, "invoke", "cas"), (1, "fail", "cas"))
    result = StatsChecker().check(history, CheckContext())
    assert result["valid"] == "unknown"
    assert result["never_ok"] == ["cas"]
    assert "cas" in result["explanation"]


def test_nemesis_ops_are_not_counted_and_an_empty_history_is_unknown() -> None:
    history = [Op(0, 0, "nemesis", OpType.INVOKE, "start-partition"), Op(1, 1, "nemesis", OpType.INFO,
                                                                         "start-partition")]
    result = StatsChecker().check(history, CheckContext())
    assert result["by_f"] == {}
    assert result["valid"] == "unknown"
