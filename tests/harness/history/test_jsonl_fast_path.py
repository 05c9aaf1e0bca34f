"""JSONL's fast path (msgspec, for lines of exactly the core fields) reads every line as the general path does."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.history.errors import Problem
from harness.history.formats import load_history
from harness.history.jsonl import read_jsonl
from harness.history.records import RecordError, op_from_record

json_values = st.recursive(st.none() | st.booleans() | st.integers(-(2**62), 2**62) | st.text(max_size=5),
                           lambda inner: st.lists(inner, max_size=3), max_leaves=8)
fields = st.fixed_dictionaries(
    {"index": st.integers(-2, 2**40) | st.booleans(), "time": st.integers(-2, 2**40) | st.floats(0, 1),
     "process": st.integers(0, 99) | st.sampled_from(["nemesis", "other"]),
     "type": st.sampled_from(["invoke", "ok", "fail", "info", "done"]), "f": st.sampled_from(["txn", "read", ""])},
    optional={"key": json_values, "value": json_values, "error": json_values, "note": json_values})


@settings(max_examples=300, deadline=None)
@given(record=fields)
def test_the_fast_path_and_the_general_path_read_a_line_alike(tmp_path_factory: pytest.TempPathFactory,
                                                              record: dict[str, object]) -> None:
    path = tmp_path_factory.mktemp("h") / "h.jsonl"
    path.write_bytes(orjson.dumps(record) + b"\n")
    ((line, read),) = list(read_jsonl(path))
    assert line == 1
    try:
        expected: object = op_from_record(orjson.loads(orjson.dumps(record)), 0)
    except RecordError as e:
        expected = str(e)
    assert (read.message if isinstance(read, Problem) else read) == expected


def test_blank_lines_extras_and_transactions(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    path.write_text('{"index":0,"time":0,"process":0,"type":"invoke","f":"txn","value":[["r",1,null]]}\n\n'
                    '{"index":1,"time":5,"process":0,"type":"ok","f":"txn","value":[["r",1,[1,2]]],"node":"n1"}\n')
    first, second = load_history(path, lines=True)
    assert first.value == [["r", 1, None]] and first.extra == {"line": 1}
    assert second.value == [["r", 1, [1, 2]]] and second.extra == {"node": "n1", "line": 3}
