"""Jepsen's EDN as Jepsen writes it: records, advisory time, independent tuples, and a faithful round trip."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import edn_format
import pytest

from harness.history.edn_values import Keyword, allow_tags, parse_value
from harness.history.errors import HistoryError, Problem
from harness.history.formats import load_history, write_history
from harness.history.jsonl import write_jsonl
from harness.history.op import Op, OpType
from harness.history.semantics import semantics_for

FIXTURES = Path(__file__).resolve().parents[2] / "checkers" / "linearizability" / "jepsen_histories"

# Jepsen 0.3 prints each op as a record; :time goes backwards at line 3 (a completion journaled after
# a later invocation), and again at line 6.
BACKWARDS = """\
#jepsen.history.Op{:index 0, :time 1000, :type :invoke, :process 0, :f :write, :value 3}
#jepsen.history.Op{:index 1, :time 1500, :type :invoke, :process 1, :f :read, :value nil}
#jepsen.history.Op{:index 2, :time 1400, :type :ok, :process 0, :f :write, :value 3}
#jepsen.history.Op{:index 3, :time 2000, :type :info, :process :nemesis, :f :start-partition, :value :majority}
#jepsen.history.Op{:index 4, :time 2600, :type :ok, :process 1, :f :read, :value 3}
#jepsen.history.Op{:index 5, :time 2550, :type :invoke, :process 0, :f :read, :value nil}
#jepsen.history.Op{:index 6, :time 2700, :type :info, :process 0, :f :read, :value nil, :error :timeout}
"""


def test_backwards_time_in_edn_is_one_warning_not_a_refusal(tmp_path: Path) -> None:
    path = tmp_path / "history.edn"
    path.write_text(BACKWARDS)
    warnings: list[Problem] = []
    ops = load_history(path, warnings=warnings)
    assert [op.index for op in ops] == list(range(7))  # ordered by position, every op kept
    assert [str(w) for w in warnings] == [
        f"{path}:3: time goes backwards here (1400 after 1500) and at 2 ops in all; ops are ordered by position, "
        "as Jepsen does"]
    assert ops[3].process == "nemesis" and ops[6].error == "timeout"


def test_backwards_time_in_native_jsonl_is_still_an_error(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    write_jsonl([Op(0, 10, 0, OpType.INVOKE, "read"), Op(1, 9, 0, OpType.OK, "read", value=1)], path)
    with pytest.raises(HistoryError, match=r"history.jsonl:2: time goes backwards"):
        load_history(path)


def test_semantics_by_format_and_override() -> None:
    assert semantics_for("edn").to_dict() == {"name": "knossos", "nil_read": "any", "time": "advisory",
                                              "order": "position"}
    assert semantics_for("jsonl").nil_read == "absent" and semantics_for("jsonl").time == "strict"
    assert semantics_for("porcupine-etcd").nil_read == "absent"
    assert semantics_for("jsonl", "any").nil_read == "any" and semantics_for("edn", "absent").nil_read == "absent"
    with pytest.raises(ValueError, match="nil-read"):
        semantics_for("edn", "sometimes")


INDEPENDENT = """\
{:type :invoke, :f :write, :value [0 1], :process 0, :time 10, :index 0}
{:type :invoke, :f :read, :value [1 nil], :process 1, :time 11, :index 1}
{:type :ok, :f :write, :value [0 1], :process 0, :time 12, :index 2}
{:type :ok, :f :read, :value [1 4], :process 1, :time 13, :index 3}
{:type :info, :f :start, :value nil, :process :nemesis, :time 14, :index 4}
{:type :invoke, :f :cas, :value [1 [4 5]], :process 1, :time 15, :index 5}
{:type :fail, :f :cas, :value [1 [4 5]], :process 1, :time 16, :index 6, :error :mismatch}
{:type :invoke, :f :read, :value [0 nil], :process 0, :time 17, :index 7}
{:type :info, :f :read, :value nil, :process 0, :time 18, :index 8, :error :timeout}
"""


def test_independent_tuples_become_keys(tmp_path: Path) -> None:
    path = tmp_path / "history.edn"
    path.write_text(INDEPENDENT)
    ops = load_history(path)
    client = [(op.key, op.value) for op in ops if op.process != "nemesis"]
    assert client == [(0, 1), (1, None), (0, 1), (1, 4), (1, [4, 5]), (1, [4, 5]), (0, None), (0, None)]
    assert ops[4].key is None and ops[4].value is None


def test_cas_pairs_and_explicit_keys_are_not_tuples(tmp_path: Path) -> None:
    path = tmp_path / "cas.edn"
    path.write_text("{:process 0, :type :invoke, :f :cas, :value [1 2]}\n"
                    "{:process 0, :type :ok, :f :cas, :value [1 2]}\n")
    assert [(op.key, op.value) for op in load_history(path)] == [(None, [1, 2]), (None, [1, 2])]
    path.write_text("{:process 0, :type :invoke, :f :put, :key nil, :value [1 2]}\n"
                    "{:process 0, :type :ok, :f :put, :key nil, :value [1 2]}\n")
    assert [(op.key, op.value) for op in load_history(path)] == [(None, [1, 2]), (None, [1, 2])]


def test_a_completion_with_another_key_is_named_by_line(tmp_path: Path) -> None:
    path = tmp_path / "history.edn"
    path.write_text("{:process 0, :type :invoke, :f :write, :value [0 1]}\n"
                    "{:process 0, :type :ok, :f :write, :value [7 1]}\n")
    with pytest.raises(HistoryError) as err:
        load_history(path)
    assert str(err.value) == f"{path}:2: independent key 7 differs from key 0 of the invocation at line 1"


def test_records_keywords_and_sets_are_read_as_jepsen_wrote_them(tmp_path: Path) -> None:
    path = tmp_path / "history.edn"
    path.write_text('#jepsen.history.Op{:index 0, :time 5, :type :info, :process :nemesis, :f :start-partition, '
                    ':value [:isolated {"n1" #{"n2" "n3"}}]}\n'
                    '#jepsen.history.Op{:index 1, :time 6, :type :invoke, :process 0, :f :txn, '
                    ':value [[:read :x nil] [:write :y 2]]}\n')
    nemesis, txn = load_history(path)
    assert nemesis.value == ["isolated", {"n1": ["n2", "n3"]}] and repr(nemesis.value[0]) == ":isolated"
    assert txn.value == [["read", "x", None], ["write", "y", 2]] and isinstance(txn.value[0][1], Keyword)


def _edn_ops(text: str) -> list[Any]:
    """Every op of a Jepsen history.edn (one per line), parsed by edn-format alone."""
    allow_tags(text)
    return [edn_format.loads(line) for line in text.splitlines() if line.strip()]


def _without(op: Any, *fields: str) -> dict[Any, Any]:
    return {k: v for k, v in op.items() if k not in {edn_format.Keyword(f) for f in fields}}


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.edn")))
def test_edn_output_is_the_jepsen_edn_it_read_op_by_op(tmp_path: Path, name: str) -> None:
    source = (FIXTURES / name).read_text()
    write_history(load_history(FIXTURES / name), tmp_path / "out.edn")
    out = (tmp_path / "out.edn").read_text().splitlines()
    assert out[0] == "[" and out[-1] == "]"
    theirs, ours = _edn_ops(source), _edn_ops("\n".join(out[1:-1]))
    assert len(ours) == len(theirs)
    index, time = edn_format.Keyword("index"), edn_format.Keyword("time")
    for position, (a, b) in enumerate(zip(theirs, ours, strict=True)):
        assert b[index] == a.get(index, position) and b[time] == a[time]
        assert _without(b, "index") == _without(a, "index"), f"op {position}"


def test_native_keys_and_txns_are_written_as_jepsen_reads_them(tmp_path: Path) -> None:
    ops = [Op(0, 0, 0, OpType.INVOKE, "txn", "k1", [["read", "x", None], ["write", "y", 2]]),
           Op(1, 5, "nemesis", OpType.INFO, "start", value=None),
           Op(2, 9, 0, OpType.OK, "txn", "k1", [["read", "x", 0], ["write", "y", 2]], error=None)]
    write_history(ops, tmp_path / "h.edn")
    lines = (tmp_path / "h.edn").read_text().splitlines()[1:-1]
    first, nemesis, _ = (edn_format.loads(line) for line in lines)
    kw = edn_format.Keyword
    assert first[kw("value")] == ["k1", [[kw("read"), "x", None], [kw("write"), "y", 2]]]
    assert first[kw("type")] == kw("invoke") and first[kw("f")] == kw("txn") and first[kw("index")] == 0
    assert nemesis[kw("process")] == kw("nemesis") and kw("key") not in first
    assert load_history(tmp_path / "h.edn") == ops


def test_values_that_only_look_like_tuples_keep_their_meaning(tmp_path: Path) -> None:
    # No keys, but every value is a pair with an int first: written with :key nil so it reads back as it was.
    ops = [Op(0, 0, 0, OpType.INVOKE, "put", value=[1, "a"]), Op(1, 1, 0, OpType.OK, "put", value=[1, "a"])]
    write_history(ops, tmp_path / "h.edn")
    assert ":key nil" in (tmp_path / "h.edn").read_text()
    assert load_history(tmp_path / "h.edn") == ops


def test_init_values_parse_as_edn() -> None:
    assert parse_value("{:x 0 :y 0}") == {"x": 0, "y": 0}
    assert parse_value("nil") is None and parse_value(":held") == "held"
    with pytest.raises(ValueError):
        parse_value("{:x")
