"""The Spark engine gives the local engine's verdicts, invalid keys and counterexamples, op for op."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from checkers.gen_history import HistoryGenerator
from checkers.linearizability.run import FileOptions, check_file
from checkers.spark.convert import to_parquet
from checkers.spark.engine import check_file_spark
from harness.history.jsonl import write_jsonl
from harness.history.op import Op, OpType
from harness.history.parquet import write_parquet

pytestmark = pytest.mark.spark

ALL = FileOptions(all_violations=True)


def _cases() -> list[tuple[str, HistoryGenerator]]:
    """Twenty generated histories: valid and invalid, few and many keys, info-heavy, unique values."""
    cases = []
    for seed in range(20):
        keys = (1, 3, 20, 200)[seed % 4]
        gen = HistoryGenerator(ops=300 + 150 * seed, keys=keys, processes=3 + seed % 5, seed=seed,
                               anomalies=min(seed % 3, keys), info_rate=(0.0, 0.05, 0.2)[seed % 3],
                               unique_values=seed % 2 == 1)
        cases.append((f"seed{seed}", gen))
    return cases


def _compare(local: Any, spark: Any) -> None:
    assert spark.valid == local.valid
    ls, ss = local.summary, spark.summary
    assert ss["engine"] == "spark"
    for field in ("model", "ops", "partitions", "unknown_keys"):
        assert ss[field] == ls[field], field
    assert sorted(map(repr, ss["invalid_keys"])) == sorted(map(repr, ls["invalid_keys"]))
    want = {repr(c.label): dataclasses.asdict(c) for c in local.counterexamples}
    got = {repr(c.label): dataclasses.asdict(c) for c in spark.counterexamples}
    assert got == want


def test_twenty_generated_histories_agree(spark: Any, tmp_path: Path) -> None:
    invalid = 0
    for name, gen in _cases():
        path = tmp_path / f"{name}.parquet"
        write_parquet(gen, path)
        local = check_file(str(path), ALL, workers=1)
        got = check_file_spark(str(path), ALL, spark=spark)
        assert sorted(got.summary["invalid_keys"]) == sorted(gen.injected), name
        _compare(local, got)
        invalid += local.valid is False
    assert invalid >= 10  # both outcomes are exercised


def _keyless_completions(ops: list[Op]) -> list[Op]:
    """The same history with keys only on invocations, plus nemesis ops (exercises the window path)."""
    out: list[Op] = []
    for op in ops:
        if op.type is not OpType.INVOKE:
            op = dataclasses.replace(op, key=None)
        out.append(op)
    t = out[len(out) // 2].time
    out.insert(len(out) // 2, Op(0, t, "nemesis", OpType.INVOKE, "start-partition", None, "majority"))
    out.append(Op(0, out[-1].time + 5, "nemesis", OpType.INFO, "start-partition", None, "healed"))
    return [dataclasses.replace(op, index=i) for i, op in enumerate(out)]


def test_jsonl_with_keyless_completions_and_nemesis_agrees(spark: Any, tmp_path: Path) -> None:
    gen = HistoryGenerator(ops=2000, keys=10, seed=7, anomalies=2, info_rate=0.05)
    path = tmp_path / "keyless.jsonl"
    write_jsonl(_keyless_completions(list(gen)), path)
    local = check_file(str(path), ALL, workers=1)
    got = check_file_spark(str(path), ALL, spark=spark)
    assert local.valid is False and sorted(local.summary["invalid_keys"]) == sorted(gen.injected)
    _compare(local, got)


def test_conversion_round_trips_and_bad_input_is_an_error(spark: Any, tmp_path: Path) -> None:
    ops = list(HistoryGenerator(ops=50, keys=2, seed=3))
    src = tmp_path / "h.jsonl"
    write_jsonl(ops, src)
    from harness.history.parquet import read_parquet

    back = [op for _, op in read_parquet(to_parquet(src, tmp_path / "h.parquet"))]
    assert back == ops
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"index": 0, "time": 0, "process": 0, "type": "nope", "f": "read"}\n')
    report = check_file_spark(str(bad), ALL, spark=spark)
    assert report.valid is None and report.errors


def test_auto_picks_local_for_small_histories_and_spark_above_the_threshold(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from checkers.spark import auto

    path = tmp_path / "small.parquet"
    write_parquet(HistoryGenerator(ops=100, keys=2, seed=1), path)
    assert auto.estimate_events(str(path)) == 200
    report = auto.check_path(str(path), ALL)
    assert report.summary["engine"] == "local" and report.valid is True
    monkeypatch.setattr(auto, "AUTO_MIN_EVENTS", 100)
    assert auto.choose_engine(str(path)) == "spark"
    assert auto.choose_engine(str(path), "local") == "local"
    with pytest.raises(ValueError, match="unknown engine"):
        auto.choose_engine(str(path), "gpu")
