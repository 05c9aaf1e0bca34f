"""Minimal witnesses: invalid, 1-minimal (every single-op removal, with the reads only that op
explained, is linearizable), checked against brute force on generated histories and on every invalid
Porcupine history as written to disk and read back."""

from __future__ import annotations

import csv
import dataclasses
import statistics
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checkers.linearizability.checker import check_calls
from checkers.linearizability.run import FileOptions, check_file
from checkers.linearizability.witness import Witness, closure, ddmin
from checkers.linearizability.witness_io import write_witness
from checkers.models import make_model
from checkers.models.base import UNKNOWN
from harness.history.formats import load_history
from harness.history.op import Call, Op, OpType
from harness.history.pairing import pair_calls
from tests.checkers.linearizability.histories import calls_of, kv_ops, kv_oracle, oracle, register_ops
from tests.checkers.linearizability.test_kv_guided import corrupt_get
from tests.checkers.linearizability.test_properties import corrupt

DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "porcupine"


def test_ddmin_finds_a_1_minimal_failing_subset() -> None:
    items: list[Any] = list(range(40))
    calls = [0]

    def fails(xs: list[Any]) -> bool:
        calls[0] += 1
        return {3, 17, 31} <= set(xs)

    assert ddmin(items, fails) == [3, 17, 31]
    assert calls[0] < 200


def test_unexplained_names_reads_from_nowhere() -> None:
    reg = make_model("cas-register").inner
    ops: list[Any] = [(("write", 1), True), (("read", None), 1), (("read", None), 2), (("cas", (2, 3)), True),
           (("cas", (1, 1)), True), (("write", 4), UNKNOWN), (("read", None), 4), (("read", None), None)]
    assert reg.unexplained(ops, None) == [2, 3]
    assert reg.unexplained([(("cas", (0, 0)), True)], None) == [0]  # a cas does not explain itself
    kv = make_model("kv").inner
    ops = [(("append", "a"), True), (("append", "b"), UNKNOWN), (("get", None), "ab"), (("get", None), "aa"),
           (("put", "x"), True), (("get", None), "xa"), (("get", None), "")]
    assert kv.unexplained(ops, "") == [3]
    keyed = make_model("register")
    keyed.encode(Call(0, 0, "read", "k1", None, None, OpType.OK, 0, 1, Op(0, 0, 0, OpType.INVOKE, "read"), None))
    keyed.encode(Call(1, 0, "read", "k2", None, None, OpType.OK, 0, 1, Op(1, 1, 0, OpType.INVOKE, "read"), None))
    assert keyed.unexplained([((0, ("write", 5)), True), ((1, ("read", None)), 5)], keyed.init()) == [1]


def witness_of(calls: list[Call], model: str) -> Witness:
    result = check_calls(calls, make_model(model), witness=True, all_violations=True)
    assert result.valid is False
    w = result.failures[0].witness
    assert w is not None
    return w


def removals(w: Witness, model_name: str) -> list[list[Call]]:
    """The witness without each op in turn, and without the reads only that op explained."""
    model = make_model(model_name)
    entries = [(c, model.encode(c)) for c in w.calls]
    encoded = {c.id: enc for c, enc in entries if enc is not None}
    init = model.init()
    return [closure([c for c in w.calls if c is not drop], model, encoded, init) for drop in w.calls]


@settings(max_examples=200, deadline=None)
@given(register_ops(max_ops=7, procs=3, values=3, cas=True), st.integers(0, 50), st.sampled_from([None, 0, 1, 2]))
def test_register_witnesses_are_1_minimal_by_brute_force(ops: list[Op], pick: int, value: Any) -> None:
    calls = calls_of(corrupt(ops, pick, value))
    if oracle(calls, fail_cas_meaningful=True):
        return
    w = witness_of(calls, "etcd")
    assert w.minimal and len(w.calls) <= len(calls)
    assert oracle(w.calls, fail_cas_meaningful=True) is False
    for rest in removals(w, "etcd"):
        assert oracle(rest, fail_cas_meaningful=True) is True


@settings(max_examples=200, deadline=None)
@given(kv_ops(max_ops=7, procs=3, keys=2), st.integers(0, 50), st.sampled_from(["", "a", "ab", "ba", "c"]))
def test_kv_witnesses_are_1_minimal_by_brute_force(ops: list[Op], pick: int, value: str) -> None:
    calls = calls_of(corrupt_get(ops, pick, value))
    if kv_oracle(calls):
        return
    result = check_calls(calls, make_model("kv"), partition=False, witness=True)
    w = result.failures[0].witness
    assert w is not None and w.minimal
    assert len({c.key for c in w.calls}) == 1  # the split search names the failing key
    assert kv_oracle(w.calls) is False
    for rest in removals(w, "kv"):
        assert kv_oracle(rest) is True


def test_an_info_write_that_explains_a_read_stays_in_the_witness() -> None:
    ops = [Op(0, 0, 0, OpType.INVOKE, "write", None, 1), Op(1, 1, 0, OpType.OK, "write", None, 1),
           Op(2, 2, 1, OpType.INVOKE, "write", None, 3), Op(3, 3, 2, OpType.INVOKE, "read"),
           Op(4, 4, 2, OpType.OK, "read", None, 3), Op(5, 5, 3, OpType.INVOKE, "read"),
           Op(6, 6, 3, OpType.OK, "read", None, 1), Op(7, 7, 1, OpType.INFO, "write", None, 3)]
    w = witness_of(calls_of(ops), "register")
    assert sorted(c.invoke.index for c in w.calls) == [0, 2, 3, 5] and w.minimal


def _invalid_rows() -> list[dict[str, str]]:
    if not (DATA / "expected.tsv").exists():
        return []
    with open(DATA / "expected.tsv", encoding="utf-8") as fh:
        return [r for r in csv.DictReader(fh, delimiter="\t") if r["expected"] == "not-linearizable"]


@pytest.mark.skipif(not _invalid_rows(), reason="Porcupine test data not found")
def test_every_invalid_porcupine_history_has_a_1_minimal_witness(tmp_path: Path) -> None:
    rows = _invalid_rows()
    assert len(rows) == 82
    sizes = []
    for row in rows:
        path = str(DATA / row["path"])
        report = check_file(path, FileOptions(witness=True))
        assert report.valid is False and len(report.witnesses) == 1, row["path"]
        w = report.witnesses[0]
        assert w.minimal, row["path"]
        model = report.summary["model"]
        # Read back from disk: native JSONL, each op with the file:line it came from.
        written = write_witness(str(tmp_path), path, w)
        ops = load_history(written, "jsonl")
        lines = Path(path).read_text().splitlines()
        for op in ops:
            file, line = op.extra["source"].rsplit(":", 1)
            assert file == path
            text = lines[int(line) - 1]
            assert f":{op.type.value}" in text and f"{op.process}" in text
        calls = pair_calls(ops)
        assert [c.invoke.index for c in calls] == [c.invoke.index for c in w.calls]
        assert check_calls(calls, make_model(model), witness=False).valid is False, row["path"]
        reread = dataclasses.replace(w, calls=calls)
        for rest in removals(reread, model):
            assert check_calls(rest, make_model(model)).valid is True, row["path"]
        sizes.append(len(calls))
    print(f"\n82 invalid Porcupine histories: witness size median {statistics.median(sizes)}, "
          f"max {max(sizes)}, sizes {sorted(sizes)}")
    assert max(sizes) < min(int(r["operations"]) for r in rows)


JEPSEN = Path(__file__).resolve().parent / "jepsen_histories"


@pytest.mark.parametrize(("name", "model"), [("cas-register-stale-reads-invalid.edn", "cas-register"),
                                             ("cas-register-independent-bad-key-3.edn", "cas-register"),
                                             ("mutex-double-grant-invalid.edn", "mutex")])
def test_jepsen_edn_witnesses_with_advisory_time(tmp_path: Path, name: str, model: str) -> None:
    """Jepsen's EDN: time may go backwards and nil reads constrain nothing; the witness keeps both."""
    report = check_file(str(JEPSEN / name), FileOptions(witness=True))
    assert report.valid is False and len(report.witnesses) == 1
    w = report.witnesses[0]
    assert w.minimal and len(w.calls) < w.original
    written = write_witness(str(tmp_path), str(JEPSEN / name), w)
    again = check_file(written, FileOptions(model=model, nil_read="any"))
    assert again.valid is False and again.summary["ops"] == len(w.calls)


def test_mutex_releases_need_acquires() -> None:
    mutex = make_model("mutex").inner
    ops: list[Any] = [("release", True), ("acquire", True), ("release", True), ("release", UNKNOWN)]
    assert mutex.unexplained(ops, False) == [2] and mutex.unexplained(ops, True) == []
