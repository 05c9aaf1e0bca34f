"""History statistics in Spark SQL: latency quantiles, throughput, and both per fault window.

Calls are paired with a window over each process ordered by index (an invocation's completion is the
process's next op), as :func:`harness.history.pairing.pair_calls` pairs them in a valid history.
Fault windows come from the nemesis's ops with :func:`harness.history.faults.fault_windows` (they are few,
so the driver reads them) and are joined to the calls by invocation time. Quantiles are Spark's
``percentile_approx`` (relative error about 1/10,000); counts and maxima are exact. Latencies are in
milliseconds, throughput in completed calls per second.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from checkers.spark.engine import read_history
from harness.history.op import Op

ACCURACY = 10_000


def _calls(df: Any) -> Any:
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    w = Window.partitionBy("process").orderBy("index")
    paired = (df.filter(F.col("process") != "nemesis")
              .select("f", "type", "time", F.lead("type").over(w).alias("outcome"),
                      F.lead("time").over(w).alias("done")))
    return (paired.filter((F.col("type") == "invoke") & F.col("outcome").isNotNull()
                          & (F.col("outcome") != "invoke"))
            .select("f", "outcome", F.col("time").alias("invoked"), "done",
                    ((F.col("done") - F.col("time")) / 1e6).alias("latency_ms")))


def _latency(calls: Any, *group: str) -> list[dict[str, Any]]:
    from pyspark.sql import functions as F

    q = F.percentile_approx("latency_ms", [0.5, 0.95, 0.99], ACCURACY)
    rows = (calls.groupBy(*group).agg(F.count(F.lit(1)).alias("count"), q.alias("q"),
                                      F.max("latency_ms").alias("max"))
            .orderBy(*group).collect())
    return [{**{g: r[g] for g in group}, "count": r["count"], "p50": round(r["q"][0], 3),
             "p95": round(r["q"][1], 3), "p99": round(r["q"][2], 3), "max": round(r["max"], 3)} for r in rows]


def history_stats(spark: Any, path: str) -> dict[str, Any]:
    """Latency and throughput of the Parquet history at ``path``, overall and per fault window.

    Returns:
        ``latency``: one row per (f, outcome) with count, p50, p95, p99 and max; ``throughput``:
        completed calls per second (count of seconds, mean, min, max); ``faults``: per fault window
        (fault, start, end in ns), the calls invoked inside it, their latency rows and throughput.
    """
    from pyspark.sql import functions as F

    from harness.history.faults import fault_windows
    from harness.history.parquet import _row_to_op

    df = read_history(spark, path)
    calls = _calls(df).cache()
    try:
        per_second = calls.groupBy(F.floor(F.col("done") / 1e9).alias("second")).count()
        tp = per_second.agg(F.count(F.lit(1)).alias("seconds"), F.avg("count").alias("mean"),
                            F.min("count").alias("min"), F.max("count").alias("max")).collect()[0]
        out: dict[str, Any] = {
            "latency": _latency(calls, "f", "outcome"),
            "throughput": {"seconds": tp["seconds"], "mean": round(tp["mean"] or 0.0, 2), "min": tp["min"],
                           "max": tp["max"]},
        }
        nemesis = df.filter(F.col("process") == "nemesis").orderBy("index").collect()
        end = df.agg(F.max("time")).collect()[0][0] or 0
        ops = [_row_to_op(path, i + 1, r.asDict()) for i, r in enumerate(nemesis)]
        windows = fault_windows([o for o in ops if isinstance(o, Op)])
        windows = [dataclasses.replace(w, end=max(w.start, end)) if w.open_ended else w for w in windows]
        out["faults"] = []
        for w in windows:
            inside = calls.filter((F.col("invoked") >= w.start) & (F.col("invoked") <= w.end))
            n = inside.count()
            seconds = max((w.end - w.start) / 1e9, 1e-9)
            out["faults"].append({"fault": w.fault, "start": w.start, "end": w.end, "open_ended": w.open_ended,
                                  "calls": n, "throughput": round(n / seconds, 2),
                                  "latency": _latency(inside, "f", "outcome")})
        return out
    finally:
        calls.unpersist()
