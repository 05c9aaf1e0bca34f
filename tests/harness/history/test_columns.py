"""A history's columns: the same facts as its ops, a validity verdict equal to the validator's, and
readers that take a share of a file give exactly the ops the whole read gives for those rows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checkers.gen_history import HistoryGenerator
from harness.history.columns import KINDS, NEMESIS_KIND, invocations, read_columns
from harness.history.formats import load_history, write_history
from harness.history.jsonl import read_jsonl
from harness.history.op import NEMESIS, Op, OpType
from harness.history.parquet import read_parquet, write_parquet
from harness.history.validate import validate

FORMATS = (("jsonl", "h.jsonl"), ("parquet", "h.parquet"))
PROCESSES: list[int | str] = [0, 1, 2, NEMESIS]


def _generated(tmp_path: Path, name: str, n: int = 3000) -> list[Op]:
    ops = list(HistoryGenerator(n, keys=40, processes=7, seed=n, info_rate=0.05, anomalies=2))
    ops.insert(10, Op(ops[9].index, ops[9].time, NEMESIS, OpType.INFO, "start", value={"n1": ["x"]}))
    for i, op in enumerate(ops):
        op.index = 2 * i
    write_history(ops, tmp_path / name)
    return ops


def test_columns_hold_what_the_ops_hold(tmp_path: Path) -> None:
    for fmt, name in FORMATS:
        ops = _generated(tmp_path, name)
        cols = read_columns(str(tmp_path / name), fmt, jobs=3)
        assert cols is not None, fmt
        assert cols.index.tolist() == [op.index for op in ops]
        assert cols.time.tolist() == [op.time for op in ops]
        assert [cols.fs[c] for c in cols.f] == [op.f for op in ops]
        assert [cols.keys[c] for c in cols.key] == [op.key for op in ops]
        nemesis = [op.process == NEMESIS for op in ops]
        assert (cols.kind >= NEMESIS_KIND).tolist() == nemesis
        assert (cols.kind % NEMESIS_KIND).tolist() == [KINDS[op.type.value] for op in ops]
        procs: dict[object, int] = {}
        for code, op in zip(cols.process.tolist(), ops, strict=True):
            if op.process != NEMESIS:
                assert procs.setdefault(op.process, code) == code  # one code per process
        assert len(set(procs.values())) == len(procs)


def test_columns_refuse_what_only_the_full_reader_can_explain(tmp_path: Path) -> None:
    good = '{"index":0,"time":0,"process":0,"type":"invoke","f":"read","key":1}\n'
    for line in ('{"index":1,"time":1,"process":0,"type":"ok","f":"read"', '{"time":1,"process":0,"type":"ok","f":"r"}',
                 '{"index":1,"time":1,"process":true,"type":"ok","f":"read"}',
                 '{"index":1,"time":1,"process":0,"type":"ok","f":"read","key":[1]}', '[1, 2]'):
        path = tmp_path / "bad.jsonl"
        path.write_text(good + line + "\n")
        assert read_columns(str(path), "jsonl", jobs=2) is None, line


@st.composite
def _histories(draw: st.DrawFn) -> list[Op]:
    """Short histories, often breaking a rule: reused indices, time going back, stray completions."""
    ops = []
    index = t = 0
    for _ in range(draw(st.integers(1, 30))):
        index += draw(st.sampled_from([1, 1, 1, 2, 0]))
        t = max(0, t + draw(st.sampled_from([0, 3, 5, -1])))
        process = draw(st.sampled_from(PROCESSES))
        kind = draw(st.sampled_from(list(OpType)))
        ops.append(Op(index, t, process, kind, draw(st.sampled_from(["read", "write"])),
                      draw(st.sampled_from([None, 1, "k"]))))
    return ops


def _well_formed(ops: list[Op]) -> list[Op]:
    open_f: dict[object, str] = {}
    out = []
    for op in ops:
        if op.process != NEMESIS:
            if op.process in open_f:
                op.type = op.type if op.type is not OpType.INVOKE else OpType.OK
                op.f = open_f.pop(op.process)
            else:
                op.type = OpType.INVOKE
                open_f[op.process] = op.f
        out.append(op)
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=_histories(), fix=st.booleans())
def test_invocations_judge_as_the_validator_does(tmp_path: Path, ops: list[Op], fix: bool) -> None:
    if fix:
        ops = _well_formed(ops)
    for fmt, name in FORMATS:
        write_history(ops, tmp_path / name)
        cols = read_columns(str(tmp_path / name), fmt)
        assert cols is not None
        owner = invocations(cols)
        problems = validate(name, enumerate(ops, start=1))
        assert (owner is None) == bool(problems), (fmt, problems)
        if owner is not None:
            for row, op in enumerate(ops):
                first = ops[owner[row]] if owner[row] >= 0 else None
                assert (first is None) == (op.process == NEMESIS)
                assert first is None or (first.type is OpType.INVOKE and first.process == op.process)


def test_reading_a_share_gives_those_rows(tmp_path: Path) -> None:
    ops = _generated(tmp_path, "h.parquet", 120_000)  # three Parquet batches
    write_history(ops, tmp_path / "h.jsonl")
    (tmp_path / "gaps.jsonl").write_text((tmp_path / "h.jsonl").read_text().replace("\n", "\n\n  \n", 50))
    picked = np.random.default_rng(1).choice(len(ops), 5000, replace=False).tolist()
    rows = sorted(set(picked) | {0, 99_999, 100_000, len(ops) - 1})
    for got in (list(read_parquet(tmp_path / "h.parquet", rows)), list(read_jsonl(tmp_path / "h.jsonl", rows=rows))):
        assert [op for _, op in got] == [ops[r] for r in rows]
    whole = dict(read_jsonl(tmp_path / "gaps.jsonl"))
    lines = list(whole)
    got = list(read_jsonl(tmp_path / "gaps.jsonl", rows=rows))
    assert [line for line, _ in got] == [lines[r] for r in rows]  # line numbers count the blank lines
    assert [op for _, op in got] == [whole[lines[r]] for r in rows]
    assert [op for _, op in read_parquet(tmp_path / "h.parquet", [])] == []


def test_fast_parquet_rows_equal_the_general_conversion(tmp_path: Path) -> None:
    ops = [Op(0, 0, 3, OpType.INVOKE, "write", key="a", value={"x": [1, 2.5]}),
           Op(1, 2, NEMESIS, OpType.INFO, "start", value="n1", error="boom", extra={"node": "n1"}),
           Op(2, 4, 3, OpType.OK, "write", key="a", value={"x": [1, 2.5]}, extra={"latency": 7}),
           Op(3, 5, 12, OpType.INVOKE, "read", key=None, value=None),
           Op(4, 6, 12, OpType.FAIL, "read", key=None, value=1.5, error=["timeout", 1])]
    write_parquet(ops, tmp_path / "h.parquet")
    assert load_history(tmp_path / "h.parquet") == ops
