"""Transactional histories in the three input formats: the same ops, micro-ops intact, each op's line kept."""

from __future__ import annotations

from array import array
from pathlib import Path

import pytest

from harness.history.errors import HistoryError
from harness.history.formats import detect_format, load_history
from harness.history.op import OpType

DATA = Path(__file__).parent / "data"
SAMPLES = {"jsonl": "g-single.jsonl", "edn": "g-single.edn", "elle-json": "g-single.json"}


def _fields(path: Path) -> list[tuple[object, ...]]:
    return [(op.index, op.time, op.process, op.type, op.f, op.value, op.error) for op in load_history(path)]


@pytest.mark.parametrize("fmt", sorted(SAMPLES))
def test_each_sample_is_detected_as_its_format(fmt: str) -> None:
    assert detect_format(DATA / SAMPLES[fmt]) == fmt


def test_the_three_samples_read_as_the_same_ops() -> None:
    native = _fields(DATA / SAMPLES["jsonl"])
    assert _fields(DATA / SAMPLES["edn"]) == native
    assert _fields(DATA / SAMPLES["elle-json"]) == native
    txns = [op for op in load_history(DATA / SAMPLES["edn"]) if op.f == "txn"]
    assert len(txns) == 10
    assert txns[3].value == [["r", 1, []], ["r", 2, [1]]]  # read lists and nil survive
    assert txns[1].value == [["r", 1, None], ["r", 2, None]]
    # EDN's :append is a plain "append", as in the other formats, and stays one when compared by type.
    assert {type(m[0]) for op in txns for m in op.value} == {str}


def test_elle_json_ops_without_f_are_transactions() -> None:
    ops = load_history(DATA / SAMPLES["elle-json"])
    assert [op.f for op in ops if op.process == "nemesis"] == ["start-partition", "stop-partition"]
    assert {op.f for op in ops if op.process != "nemesis"} == {"txn"}


@pytest.mark.parametrize(("fmt", "expected"), [
    ("jsonl", list(range(1, 13))),
    ("edn", list(range(2, 14))),  # a comment line first
    ("elle-json", [*range(1, 8), 9, 10, 11, 12, 13]),  # op 6 spans two lines; op 11 starts at its own '{'
])
def test_lines_are_kept_only_when_asked(fmt: str, expected: list[int]) -> None:
    path = DATA / SAMPLES[fmt]
    assert [op.extra["line"] for op in load_history(path, lines=True)] == expected
    assert all("line" not in op.extra for op in load_history(path))
    apart = array("q")
    ops = load_history(path, line_numbers=apart)
    assert list(apart) == expected and all("line" not in op.extra for op in ops)


@pytest.mark.parametrize("name", ["malformed.jsonl", "malformed.edn", "malformed.json"])
def test_a_malformed_micro_op_is_read_with_its_line_for_the_checker_to_name(name: str) -> None:
    ops = load_history(DATA / name, lines=True)
    bad = ops[2]
    assert bad.type is OpType.INVOKE and bad.f == "txn" and bad.extra["line"] == 3
    assert bad.value[0] != ["append", 1, 1]


def test_elle_json_problems_name_their_line(tmp_path: Path) -> None:
    path = tmp_path / "h.json"
    path.write_text('[{"index": 0, "process": 0, "type": "invoke", "value": [["r", 1, null]]},\n'
                    ' {"index": 1, "process": 0, "type": "done", "value": [["r", 1, []]]}]\n')
    with pytest.raises(HistoryError) as err:
        load_history(path)
    assert str(err.value) == f"{path}:2: unknown type 'done': expected invoke, ok, fail or info"
    path.write_text('[{"index": 0, "process": 0,\n "type": "invoke",,}]')
    with pytest.raises(HistoryError) as err:
        load_history(path)
    assert str(err.value).startswith(f"{path}:2: unparseable JSON")
    path.write_text('{"ops": []}')
    assert detect_format(path) == "jsonl"  # an object is a JSONL line, not elle-cli's array
    path.write_text('[\n  {\n    "type": "invoke", "process": 0, "value": [["w", "x", 2]]\n  }\n]\n')
    assert detect_format(path) == "elle-json"
    (op,) = load_history(path, lines=True)
    assert op.f == "txn" and op.value == [["w", "x", 2]] and op.extra["line"] == 2 and op.index == 0
