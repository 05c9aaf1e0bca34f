from __future__ import annotations

import csv
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.history.errors import HistoryError
from harness.history.formats import detect_format, load_history, write_history
from harness.history.jsonl import JsonlWriter
from harness.history.op import Op, OpType
from harness.history.pairing import pair_calls


def test_every_porcupine_file_loads_with_its_operation_count(porcupine_dir: Path) -> None:
    with open(porcupine_dir / "expected.tsv") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    assert len(rows) == 109
    for row in rows:
        ops = load_history(porcupine_dir / row["path"])
        assert len(pair_calls(ops)) == int(row["operations"]), row["path"]


def test_porcupine_etcd_values_and_outcomes(porcupine_dir: Path) -> None:
    ops = load_history(porcupine_dir / "jepsen/etcd_000.log", "porcupine-etcd")
    fs = {op.f for op in ops}
    assert fs <= {"read", "write", "cas"}
    cas = [op for op in ops if op.f == "cas" and op.type is OpType.INVOKE]
    assert all(isinstance(op.value, list) and len(op.value) == 2 for op in cas)
    infos = [op for op in ops if op.type is OpType.INFO]
    assert infos and all(op.error == "timed-out" and op.value is None for op in infos)


def test_detects_each_format(tmp_path: Path, porcupine_dir: Path) -> None:
    ops = [Op(0, 0, 0, OpType.INVOKE, "read"), Op(1, 5, 0, OpType.OK, "read", value=3)]
    for fmt, name in (("jsonl", "h.jsonl"), ("edn", "h.edn"), ("parquet", "h.parquet")):
        write_history(ops, tmp_path / name, fmt)
        assert detect_format(tmp_path / name) == fmt
        assert load_history(tmp_path / name) == ops
    assert detect_format(porcupine_dir / "jepsen/etcd_001.log") == "porcupine-etcd"
    assert detect_format(porcupine_dir / "kv/c01-ok.txt") == "porcupine-kv"


def test_edn_wrappers_comments_and_keywords(tmp_path: Path) -> None:
    path = tmp_path / "h.edn"
    path.write_text(
        "; a Jepsen history\n(\n {:index 0, :time 10, :process 0, :type :invoke, :f :cas, :value [1 2]}\n"
        " {:index 1 :time 20 :process 0 :type :fail :f :cas :value [1 2] :error :mismatch} ; done\n"
        " {:index 2 :time 30 :process :nemesis :type :info :f :start :value {:n1 \"x\"}}\n)\n"
    )
    ops = load_history(path)
    assert [op.type for op in ops] == [OpType.INVOKE, OpType.FAIL, OpType.INFO]
    assert ops[1].error == "mismatch" and ops[0].value == [1, 2]
    assert ops[2].process == "nemesis" and ops[2].value == {"n1": "x"}


def test_torn_tail_is_dropped_only_when_allowed(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    with JsonlWriter(path) as w:
        w.write(Op(0, 0, 1, OpType.INVOKE, "write", value=1))
        w.write(Op(1, 9, 1, OpType.OK, "write", value=1))
    with open(path, "a") as fh:
        fh.write('{"index":2,"time":12,"proc')
    assert len(load_history(path, allow_torn_tail=True)) == 2
    with pytest.raises(HistoryError) as err:
        load_history(path)
    assert f"{path}:3:" in str(err.value)


json_scalar = st.one_of(st.none(), st.integers(-(2**53), 2**53), st.text(max_size=8), st.booleans())
json_value = st.recursive(json_scalar, lambda inner: st.lists(inner, max_size=4), max_leaves=8)


@st.composite
def histories(draw: st.DrawFn) -> list[Op]:
    n_proc = draw(st.integers(1, 4))
    ops: list[Op] = []
    time = 0
    open_f: dict[int, str] = {}
    for _ in range(draw(st.integers(0, 30))):
        time += draw(st.integers(0, 1000))
        proc = draw(st.integers(0, n_proc - 1))
        if draw(st.booleans()) and draw(st.booleans()):
            ops.append(Op(len(ops), time, "nemesis", OpType.INFO, draw(st.sampled_from(["start", "stop"])),
                          value=draw(json_value)))
            continue
        key = draw(st.one_of(st.none(), st.integers(0, 3), st.text(min_size=1, max_size=3)))
        if proc in open_f:
            kind = draw(st.sampled_from([OpType.OK, OpType.FAIL]))
            ops.append(Op(len(ops), time, proc, kind, open_f.pop(proc), key, draw(json_value),
                          error=draw(st.one_of(st.none(), st.text(min_size=1, max_size=5)))))
        else:
            f = draw(st.sampled_from(["read", "write", "cas", "add", "a-b"]))
            open_f[proc] = f
            extra = draw(st.dictionaries(st.sampled_from(["node", "latency-ms"]), json_scalar, max_size=2))
            ops.append(Op(len(ops), time, proc, OpType.INVOKE, f, key, draw(json_value), extra=extra))
    return ops


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=histories())
def test_edn_to_jsonl_to_parquet_to_edn_keeps_every_op(tmp_path: Path, ops: list[Op]) -> None:
    write_history(ops, tmp_path / "a.edn")
    from_edn = load_history(tmp_path / "a.edn", "edn")
    write_history(from_edn, tmp_path / "b.jsonl")
    from_jsonl = load_history(tmp_path / "b.jsonl", "jsonl")
    write_history(from_jsonl, tmp_path / "c.parquet")
    from_parquet = load_history(tmp_path / "c.parquet", "parquet")
    write_history(from_parquet, tmp_path / "d.edn")
    assert load_history(tmp_path / "d.edn", "edn") == ops
