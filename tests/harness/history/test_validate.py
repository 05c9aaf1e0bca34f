from __future__ import annotations

from harness.history.op import Op, OpType
from harness.history.validate import validate

INV, OK, FAIL, INFO = OpType.INVOKE, OpType.OK, OpType.FAIL, OpType.INFO


def problems(*ops: Op) -> list[str]:
    return [f"{p.line}:{p.message}" for p in validate("h", [(i + 1, op) for i, op in enumerate(ops)])]


def test_a_well_formed_history_has_no_problems() -> None:
    assert problems(
        Op(0, 0, 0, INV, "write", value=1), Op(1, 1, 1, INV, "read"), Op(2, 2, 0, OK, "write", value=1),
        Op(3, 3, "nemesis", INFO, "start"), Op(4, 3, 1, INFO, "read"), Op(5, 4, "nemesis", INFO, "start"),
        Op(6, 9, 0, INV, "read"), Op(7, 9, 0, FAIL, "read"),
    ) == []


def test_completion_without_invocation() -> None:
    assert problems(Op(0, 0, 3, OK, "read")) == ["1:ok completion for process 3 without an invocation"]


def test_invoking_twice_while_busy() -> None:
    found = problems(Op(0, 0, 3, INV, "read"), Op(1, 1, 3, INV, "read"))
    assert found == ["2:process 3 invokes while its op from line 1 is still open"]


def test_reuse_after_info() -> None:
    found = problems(Op(0, 0, 3, INV, "write"), Op(1, 1, 3, INFO, "write"), Op(2, 2, 3, INV, "read"))
    assert found == ["3:process 3 invokes again after its op ended in info at line 2"]


def test_time_backwards_and_duplicate_index() -> None:
    found = problems(Op(0, 5, 0, INV, "read"), Op(0, 4, 0, OK, "read"))
    assert found == ["2:duplicate index 0 (first used at line 1)", "2:time goes backwards: 4 after 5"]


def test_index_must_increase() -> None:
    found = problems(Op(5, 0, 0, INV, "read"), Op(3, 1, 0, OK, "read"))
    assert found == ["2:index 3 is not greater than the previous index 5"]


def test_completion_f_must_match() -> None:
    found = problems(Op(0, 0, 0, INV, "read"), Op(1, 1, 0, OK, "write"))
    assert found == ["2:completion f 'write' does not match the invocation's 'read' at line 1"]
