"""A malformed micro-op is one clear error naming its op's index and line, never a traceback or a guess."""

from __future__ import annotations

from typing import Any

import pytest

from checkers.txn import MalformedTxn, check_txn
from harness.history.op import Op, OpType


def _ops(value: Any, completed: Any = None, kind: str = "ok") -> list[Op]:
    return [Op(0, 0, 0, OpType.INVOKE, "txn", None, value, extra={"line": 7}),
            Op(1, 5, 0, OpType(kind), "txn", None, value if completed is None else completed, extra={"line": 8})]


@pytest.mark.parametrize(("workload", "value", "why"), [
    ("list-append", None, "must be a list of micro-ops"),
    ("list-append", [["append", 1]], "expected [f, key, value]"),
    ("list-append", [7], "expected [f, key, value]"),
    ("list-append", [["w", 1, 2]], "list-append micro-ops are append and r"),
    ("rw-register", [["append", 1, 2]], "rw-register micro-ops are w and r"),
    ("list-append", [["append", [1], 2]], "a key must be an integer or a string"),
    ("list-append", [["append", 1, [2]]], "an appended value must be an integer or a string"),
    ("list-append", [["r", 1, 5]], "must be a list (or nil)"),
    ("rw-register", [["w", 1, {"a": 1}]], "a written value must be an integer or a string"),
    ("rw-register", [["r", 1, [1]]], "must be a value (or nil)"),
    ("list-append", [["append", 1, 2], ["append", 1, 2]], "both append 2 to key 1"),
])
def test_each_malformed_micro_op_names_its_line(workload: str, value: Any, why: str) -> None:
    with pytest.raises(MalformedTxn) as caught:
        check_txn(_ops(value), workload)
    e = caught.value
    assert why in str(e) and "\n" not in str(e)
    assert e.line == 8 and e.index == 1  # the completion: an ok transaction's micro-ops are its completed ones
    assert e.where("h.jsonl").startswith("h.jsonl:8: ")


def test_a_failed_transactions_invoked_micro_ops_are_checked_too() -> None:
    with pytest.raises(MalformedTxn) as caught:
        check_txn(_ops([["append", 1]], kind="fail"), "list-append")
    assert caught.value.line == 7


def test_lines_given_beside_the_ops() -> None:
    ops = _ops([["x", 1, 2]])
    for op in ops:
        op.extra.clear()
    with pytest.raises(MalformedTxn) as caught:
        check_txn(ops, "list-append", lines=[3, 4])
    assert caught.value.line == 4


def test_an_unknown_workload_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown transactional workload"):
        check_txn([], "bank")
