"""Process and real-time edges on Spark, in O(n) edges, as :func:`checkers.txn.graph.order_edges` builds them.

Process order: a window over each process's live (not failed) transactions links each to the next. Real time:
the live invocations and the ok completions sorted by time (an invocation first at equal times); each maximal
run of completions becomes a barrier node, ``T -> barrier`` for each transaction completing in the run,
``barrier -> next barrier``, and ``barrier -> T`` for each transaction invoked after the run and before the
next. Numbering the runs is a prefix sum over the sorted events: each sorted partition counts its own run
starts, the driver adds them up (one row per partition), and a second pass numbers the runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from checkers.spark.txn_append import EDGE_COLUMNS
from checkers.spark.txn_input import FAIL, OK
from checkers.txn.inference import PASS, PROCESS, REALTIME

EDGE_DDL = "src long, dst long, etype byte, key long, s0 byte, s1 long, s2 long"


def process_edges(txns: Any) -> Any:
    """Each process's consecutive live transactions (processes numbered below 0 have no order)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    c = F.col
    w = Window.partitionBy("pnum").orderBy("tid")
    live = txns.filter((c("kind") != FAIL) & (c("pnum") >= 0)).select("tid", "pnum",
                                                                       F.lag("tid").over(w).alias("prev"))
    return live.filter(c("prev").isNotNull()).select(
        c("prev").alias("src"), c("tid").alias("dst"), F.lit(PROCESS).cast("byte").alias("etype"),
        F.lit(-1).cast("long").alias("key"), F.lit(3).cast("byte").alias("s0"), c("pnum").alias("s1"),
        c("prev").alias("s2"))


def realtime_edges(txns: Any, base: int) -> tuple[Any, np.ndarray, int, Any]:
    """``(edges, chain, barriers, events)``: the edges in and out of the barriers (a DataFrame), the barrier
    chain's edges (``src, dst`` arrays, made here), how many barriers (barrier ``b`` is node ``base + b``), and
    the sorted events, persisted: unpersist them once the edges are collected."""
    from pyspark.sql import functions as F

    c = F.col
    inv = txns.filter(c("kind") != FAIL).select(c("itime").alias("t"), F.lit(0).alias("isc"), "tid")
    done = txns.filter(c("kind") == OK).select(c("ctime").alias("t"), F.lit(1).alias("isc"), "tid")
    events = (inv.unionByName(done).orderBy("t", "isc", "tid")
              .select("isc", "tid", F.spark_partition_id().alias("part")).persist())
    parts = sorted(tuple(r) for r in events.mapInArrow(_summary, "part int, n long, first int, last int, "
                                                                 "starts long").collect())
    plan: dict[int, tuple[int, bool, int]] = {}
    runs = before = 0
    prev_c = False
    for part, n, first, last, starts in parts:
        if n == 0:
            continue
        if first and prev_c:
            starts -= 1  # its first completion continues the previous partition's run
        plan[part] = (runs, prev_c, before)
        runs += starts
        before += n
        prev_c = bool(last)
    edges = events.mapInArrow(_numbering(plan, base), EDGE_DDL)
    b = np.arange(base, base + max(runs - 1, 0), dtype=np.int64)
    return edges.select(*EDGE_COLUMNS), np.stack([b, b + 1]), runs, events


def _summary(batches: Iterator[Any]) -> Iterator[Any]:
    """One row per partition: its events, whether its first and last are completions, its run starts (its first
    row counted as one when it is a completion)."""
    import pyarrow as pa

    part, n, first, last, starts = -1, 0, 0, 0, 0
    for b in batches:
        if b.num_rows == 0:
            continue
        isc = b.column(0).to_numpy(zero_copy_only=False).astype(bool)
        part = int(b.column(2)[0].as_py())
        prev = np.concatenate([[bool(last) if n else False], isc[:-1]])
        starts += int((isc & ~prev).sum())
        if n == 0:
            first = int(isc[0])
        last = int(isc[-1])
        n += len(isc)
    if n:
        yield pa.RecordBatch.from_pydict({"part": [part], "n": [n], "first": [first], "last": [last],
                                          "starts": [starts]}, schema=pa.schema([
            ("part", pa.int32()), ("n", pa.int64()), ("first", pa.int32()), ("last", pa.int32()),
            ("starts", pa.int64())]))


def _edge_schema() -> Any:
    import pyarrow as pa

    i = pa.int64()
    return pa.schema([("src", i), ("dst", i), ("etype", pa.int8()), ("key", i), ("s0", pa.int8()), ("s1", i),
                      ("s2", i)])


def _numbering(plan: dict[int, tuple[int, bool, int]], base: int) -> Any:
    def number(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        schema = _edge_schema()

        run = ordinal = -1
        prev: bool | None = None
        for b in batches:
            if b.num_rows == 0:
                continue
            isc = b.column(0).to_numpy(zero_copy_only=False).astype(bool)
            tid = b.column(1).to_numpy(zero_copy_only=False).astype(np.int64)
            if prev is None:
                start_runs, prev, before = plan[int(b.column(2)[0].as_py())]
                run, ordinal = start_runs - 1, before
            pv = np.concatenate([[prev], isc[:-1]])
            r = run + np.cumsum(isc & ~pv)
            order = ordinal + np.arange(len(isc), dtype=np.int64)
            run, prev, ordinal = int(r[-1]), bool(isc[-1]), ordinal + len(isc)
            into = isc
            out = ~isc & (r >= 0)
            n_in, n_out = int(into.sum()), int(out.sum())
            yield pa.RecordBatch.from_pydict({
                "src": np.concatenate([tid[into], base + r[out]]),
                "dst": np.concatenate([base + r[into], tid[out]]),
                "etype": np.concatenate([np.full(n_in, REALTIME, np.int8), np.full(n_out, PASS, np.int8)]),
                "key": np.full(n_in + n_out, -1, np.int64),
                "s0": np.concatenate([np.full(n_in, 3, np.int8), np.full(n_out, 5, np.int8)]),
                "s1": np.concatenate([order[into], order[out]]),
                "s2": np.zeros(n_in + n_out, np.int64)}, schema=schema)

    return number
