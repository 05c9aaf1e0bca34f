"""Spark SQL statistics agree with the perf checker's, overall and inside fault windows."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from checkers.gen_history import HistoryGenerator
from checkers.perf import completed_calls, latency_summary
from checkers.spark.stats import history_stats
from harness.history.op import Op, OpType
from harness.history.parquet import write_parquet

pytestmark = pytest.mark.spark


def test_latency_throughput_and_fault_windows(spark: Any, tmp_path: Path) -> None:
    ops = list(HistoryGenerator(ops=3000, keys=5, seed=5, info_rate=0.05))
    a, b = ops[1000].time, ops[3000].time
    nem = [Op(0, a, "nemesis", OpType.INVOKE, "start-partition", None, "majority"),
           Op(0, a, "nemesis", OpType.INFO, "start-partition", None, "majority"),
           Op(0, b, "nemesis", OpType.INVOKE, "stop-partition", None, None),
           Op(0, b, "nemesis", OpType.INFO, "stop-partition", None, None)]
    history = sorted(ops + nem, key=lambda o: (o.time, o.process == "nemesis"))
    history = [dataclasses.replace(o, index=i) for i, o in enumerate(history)]
    path = tmp_path / "h.parquet"
    write_parquet(history, path)
    stats = history_stats(spark, str(path))
    want = latency_summary(completed_calls(history))
    got = {(r["f"], r["outcome"]): r for r in stats["latency"]}
    assert set(got) == {(f, o) for f, by in want.items() for o in by}
    for (f, o), row in got.items():
        assert row["count"] == want[f][o]["count"]
        assert row["max"] == want[f][o]["max"]
        assert abs(row["p50"] - want[f][o]["p50"]) <= 0.01 * want[f][o]["max"]
    assert stats["throughput"]["seconds"] >= 1
    [window] = stats["faults"]
    assert (window["fault"], window["start"], window["end"]) == ("partition", a, b)
    inside = [c for c in completed_calls(history) if a <= c.call_time <= b]
    assert window["calls"] == len(inside) > 0
    assert sum(r["count"] for r in window["latency"]) == len(inside)
