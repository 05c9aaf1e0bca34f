"""``--engine spark`` for transactional histories: the dependency graph built with DataFrame joins, the cycles
searched in its strongly connected components by the local engine's code, so the result is the local one's.

Steps: (1) the history streams into Parquet (:mod:`checkers.spark.txn_input`); (2) Spark pairs the
transactions, parses the micro-ops, numbers the keys, and finds a malformed micro-op the way the local engine's
checks would (the local checks then run on that transaction alone, for the same one-line message); (3) Spark
builds the version orders and the data edges by joins, writes joined to reads by key and value, and the process
or real-time edges (:mod:`checkers.spark.txn_order`); (4) the driver collects the edges as Arrow and computes
the strongly connected components with the local engine's scipy code (not GraphFrames: it needs a JVM package
that cannot be installed offline, and its SCC is an iterative Pregel job, slower than scipy on the edge lists one
driver holds); (5) Spark flags the keys where an anomaly without a cycle may be; the local inference runs on the
micro-ops of those keys and the cycles' keys only (every one of its findings is per key), which gives the
non-cycle anomalies and the words for every edge; (6) only the transactions those name come back from Spark.

list-append (:mod:`checkers.spark.txn_append`): each edge carries its place in the local engine's edge arrays, so
the cycle search runs on exactly the local graph. rw-register (:mod:`checkers.spark.txn_register`): Spark's graph
has an edge per pair where the local one has chains of virtual nodes; its components name the transactions on
cycles, and the local graph over their keys (with every transaction's order edges) is what is searched.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from checkers.spark import txn_input as ti
from checkers.txn import models
from checkers.txn.checker import make_inference, parse_models
from checkers.txn.cycles import Found, search
from checkers.txn.errors import MalformedTxn
from checkers.txn.graph import Graph, components
from checkers.txn.inference import PASS
from checkers.txn.result import anomaly_entries, assemble, hashable
from checkers.txn.txns import TxnTable, collect
from harness.history.op import Op

WORKLOADS = ("list-append", "rw-register")
"""The workloads the Spark engine checks."""


def check_txn_spark(history: str | Sequence[Op], workload: str,
                    consistency: Sequence[str] | str = ("strict-serializable",), *, spark: Any = None,
                    spark_master: str | None = None, fmt: str = "auto", source: str | None = None,
                    lines: Sequence[int] | None = None, cycle_budget_s: float = 10.0,
                    cap: int = 20) -> dict[str, Any]:
    """Check a transactional history on Spark; the result is :func:`checkers.txn.check_txn`'s, plus
    ``engine: "spark"``. For rw-register, ``graph``'s ``nodes`` and ``edges`` count Spark's graph (an edge per pair,
    where the local engine's graph has chains of virtual nodes), its ``components`` are the same.

    Args:
        history: a history file (any format ``harness.history`` reads) or the ops themselves.
        workload: ``list-append`` or ``rw-register``.
        consistency: the models to check (Elle's names).
        spark: a SparkSession; None starts one with :func:`checkers.spark.engine.get_session`.
        spark_master: the master URL when ``spark`` is None.
        fmt: the file's format (``auto`` detects it).
        source: the file name explanations give with lines (default: ``history`` when it is a path).
        lines: each op's line, for ops in memory that do not carry ``extra["line"]``.
        cycle_budget_s: seconds the cycle search may take in all.
        cap: anomalies explained per type (all are counted).

    Raises:
        MalformedTxn: a micro-op is malformed (the local engine's message, op index and line).
        HistoryError: the file cannot be read as a history.
        models.UnknownModel: a consistency model is not known.
        ValueError: an unknown workload.
    """
    if workload not in WORKLOADS:
        raise ValueError(f"the Spark engine checks {' and '.join(WORKLOADS)} histories, not {workload!r}")
    start = time.perf_counter()
    checked = parse_models(consistency)
    order = models.graph_needs(checked)
    if isinstance(history, str | os.PathLike):
        source = source if source is not None else str(history)
    with tempfile.TemporaryDirectory(prefix="fencepost-spark-txn-") as tmp:
        parquet = os.path.join(tmp, "txns.parquet")
        items = ti.file_items(str(history), fmt) if isinstance(history, str | os.PathLike) \
            else ti.op_items(history, lines)
        n = ti.write_txn_parquet(items, parquet)
        if spark is None:
            from checkers.spark.engine import get_session

            spark = get_session(spark_master)
        run = _Run(spark, parquet, n, workload, order)
        try:
            result = run.check(checked, source, cycle_budget_s, cap)
        finally:
            run.close()
    result["engine"] = "spark"
    result["seconds"] = round(time.perf_counter() - start, 3)
    return result


TXNS_PER_PARTITION = 250_000
"""Shuffles get a partition per this many transactions (about a million micro-ops), and at least one per core."""


def shuffle_partitions(spark: Any, n: int) -> int:
    """Partitions for the check's shuffles: the cores, or more for a big history (Spark's default of 200 would
    make a small history's dozens of shuffles take minutes)."""
    try:
        cores = int(spark.sparkContext.defaultParallelism)
    except Exception:  # Spark Connect has no SparkContext
        cores = int(spark.conf.get("spark.default.parallelism", "8") or 8)
    return max(cores, -(-n // TXNS_PER_PARTITION))


class _Run:
    """One history's DataFrames and what the driver has collected of them."""

    def __init__(self, spark: Any, parquet: str, n: int, workload: str, order: str) -> None:
        self.spark, self.n, self.workload, self.order = spark, n, workload, order
        self._partitions = spark.conf.get("spark.sql.shuffle.partitions")
        spark.conf.set("spark.sql.shuffle.partitions", str(shuffle_partitions(spark, n)))
        self.ops = spark.read.schema(ti.OPS_DDL).parquet(parquet)
        self.txns = ti.transactions(self.ops).persist()
        self.mops = ti.micro_ops(self.txns, workload).persist()
        self._cached: list[Any] = [self.txns, self.mops]

    def close(self) -> None:
        """Drop what was cached."""
        for df in self._cached:
            df.unpersist()
        self.spark.conf.set("spark.sql.shuffle.partitions", self._partitions)

    def check(self, checked: list[str], source: str | None, budget: float, cap: int) -> dict[str, Any]:
        """The whole check (see the module's docstring)."""
        from checkers.spark.txn_append import with_groups

        kinds = self._summary()
        kids = ti.key_ids(self.mops).persist()
        m = with_groups(self.mops, kids).persist()
        self._cached += [kids, m]
        classes = [*models.CYCLE_BASES, *(base + "-" + self.order for base in models.CYCLE_BASES if self.order)]
        if self.workload == "rw-register":
            return self._check_register(m, kinds, checked, classes, source, budget, cap)
        return self._check_append(m, kinds, checked, classes, source, budget, cap)

    def _order_edges(self, edges: Any, columns: Sequence[str]) -> tuple[Any, np.ndarray, int]:
        """``edges`` with the process or real-time edges added; the barrier chain; how many barriers."""
        chain = np.zeros((2, 0), dtype=np.int64)
        if self.order == "process":
            from checkers.spark.txn_order import process_edges

            return edges.unionByName(process_edges(self.txns).select(*columns)), chain, 0
        if self.order == "realtime":
            from checkers.spark.txn_order import realtime_edges

            rt, chain, n_virtual, events = realtime_edges(self.txns, self.n)
            self._cached.append(events)
            return edges.unionByName(rt.select(*columns)), chain, n_virtual
        return edges, chain, 0

    def _chosen_mops(self, m: Any, flagged: Any, kids: list[int], tids: list[int]) -> Any:
        """The micro-ops (``tid, idx, kid, kenc, mop``, as pandas) of the flagged keys, of ``kids`` and of every key
        the transactions ``tids`` touch."""
        from pyspark.sql import functions as F

        want = flagged
        if kids:
            want = want.unionByName(self.spark.createDataFrame([(k,) for k in kids], "kid long"))
        if tids:
            chosen = self.spark.createDataFrame([(t,) for t in tids], "tid long")
            want = want.unionByName(m.join(F.broadcast(chosen), "tid").select("kid"))
        return m.join(F.broadcast(want.distinct()), "kid").select("tid", "idx", "kid", "kenc", "mop").toPandas()

    def _check_append(self, m: Any, kinds: dict[int, int], checked: list[str], classes: list[str],
                      source: str | None, budget: float, cap: int) -> dict[str, Any]:
        """list-append: the graph from Spark, as the local engine's; the local inference only to explain."""
        import orjson

        from checkers.spark.txn_append import EDGE_COLUMNS, append_graph

        edges, flagged, cached = append_graph(m, self.txns)
        self._cached += cached
        edges, chain, n_virtual = self._order_edges(edges, EDGE_COLUMNS)
        graph = _collect_graph(edges.select(*EDGE_COLUMNS), chain, self.n, self.n + n_virtual)
        comps = components(graph)
        outcome = search(graph, comps, classes, budget, cap)
        cycle_kids = sorted({s.key for f in outcome.cycles for s in f.steps if s.key >= 0})
        cycle_txns = sorted({s.src for f in outcome.cycles for s in f.steps})
        local = self._chosen_mops(m, flagged, cycle_kids, [])
        table, inference, data = self._local(local, cycle_txns)
        # Steps name keys by the Spark key ids; the local inference numbers its own keys.
        names = dict(zip(local["kid"].tolist(), local["kenc"].tolist(), strict=True))
        mine = {hashable(k): i for i, k in enumerate(data.keys)}
        remap = {kid: mine[hashable(orjson.loads(names[kid]))] for kid in cycle_kids}
        cycles = [Found(f.type, [replace(s, key=remap.get(s.key, s.key)) for s in f.steps], f.component)
                  for f in outcome.cycles]
        anomalies = anomaly_entries(table, inference, data, cycles, source)
        counts = {**data.cases.counts, **outcome.counts}
        return assemble(self.workload, checked, self.n, kinds, counts, anomalies, outcome.incomplete, graph,
                        len(comps.sizes), self.order)

    def _check_register(self, m: Any, kinds: dict[int, int], checked: list[str], classes: list[str],
                        source: str | None, budget: float, cap: int) -> dict[str, Any]:
        """rw-register: Spark's graph finds the transactions on cycles; the local engine's graph over their keys
        (and the flagged ones), with the order edges of every transaction, is searched and explained."""
        from checkers.spark.txn_register import register_graph
        from checkers.txn.graph import build, strong_components

        edges, flagged, cached = register_graph(m, self.txns, self.order)
        self._cached += cached
        edges, chain, n_virtual = self._order_edges(edges, ("src", "dst"))
        pdf = edges.toPandas()
        src = np.concatenate([pdf["src"].to_numpy(np.int64), chain[0]])
        dst = np.concatenate([pdf["dst"].to_numpy(np.int64), chain[1]])
        labels = strong_components(self.n + n_virtual, src, dst)
        sizes = np.bincount(labels) if len(labels) else np.zeros(0, dtype=np.int64)
        on_cycles = np.flatnonzero(sizes[labels[: self.n]] > 1).tolist() if self.n else []
        local = self._chosen_mops(m, flagged, [], on_cycles)
        table, inference, data = self._local(local, on_cycles, everyone=True)
        full = table.values
        assert table.restricted is not None
        table.values = table.restricted
        graph = build(table, data.edges, data.n_virtual, self.order)
        table.values = full
        comps = components(graph)
        outcome = search(graph, comps, classes, budget, cap)
        anomalies = anomaly_entries(table, inference, data, outcome.cycles, source)
        counts = {**data.cases.counts, **outcome.counts}
        # The graph's size is Spark's (one edge per pair, no virtual nodes but the barriers); its components are
        # the local graph's, which are the whole history's.
        spark_graph = Graph(self.n, self.n + n_virtual, src, dst, np.zeros(len(src), np.uint8), src)
        return assemble(self.workload, checked, self.n, kinds, counts, anomalies, outcome.incomplete, spark_graph,
                        len(comps.sizes), self.order)

    def _local(self, local: Any, cycle_txns: list[int], *, everyone: bool = False) -> tuple[_Table, Any, Any]:
        """The local inference on the micro-ops of the chosen keys, in a table of every transaction that has any
        of them (or is on a cycle), with the ops of those transactions, to show them (``everyone``: with every
        transaction's outcome, process and times too, for the order edges)."""
        import orjson

        local = local.sort_values(["tid", "idx"], kind="stable")
        tids = np.unique(np.concatenate([local["tid"].to_numpy(np.int64), np.array(cycle_txns, dtype=np.int64)]))
        table = self._table(tids, everyone=everyone)
        values: list[Any] = table.values
        restricted: dict[int, list[Any]] = {}
        for tid, mop in zip(local["tid"].tolist(), local["mop"].tolist(), strict=True):
            restricted.setdefault(tid, []).append(orjson.loads(mop))
        full = list(values)
        for t in range(len(values)):
            values[t] = restricted.get(t, [])
        table.lens = None
        inference = make_inference(self.workload, self.order)
        data = inference.infer(table, self.order, self.n)
        table.restricted = table.values
        table.values = full
        return table, inference, data

    def _table(self, tids: np.ndarray, *, everyone: bool = False) -> _Table:
        """A TxnTable over all ``n`` transactions that knows those in ``tids`` (their ops fetched from Spark, in
        one job: each op row with its transaction's columns); ``everyone``: every transaction's outcome, process
        and times too (one more job)."""
        from pyspark.sql import functions as F

        n = self.n
        chosen = self.spark.createDataFrame([(int(t),) for t in tids.tolist()], "tid long")
        info = self.txns.join(F.broadcast(chosen), "tid").select("tid", "pnum", "kind", "itime", "ctime", "irow",
                                                                  "crow")
        at_rows = info.select("*", F.explode(F.array("irow", "crow")).alias("row")).filter(F.col("row") >= 0)
        fetched = (self.ops.select("row", "line", "index", "time", "process", "type", "value", "error")
                   .join(at_rows, "row").toPandas().sort_values("row", kind="stable")
                   .reset_index(drop=True))
        ops = [ti.op_from_row(r) for r in fetched.to_dict("records")]
        process = np.zeros(n, dtype=np.int64)
        kind = np.zeros(n, dtype=np.int8)
        itime = np.zeros(n, dtype=np.int64)
        ctime = np.full(n, -1, dtype=np.int64)
        ipos = np.full(n, -1, dtype=np.int64)
        cpos = np.full(n, -1, dtype=np.int64)
        values: list[Any] = [None] * n
        if everyone:
            cols = self.txns.select("tid", "pnum", "kind", "itime", "ctime").toPandas()
            at = cols["tid"].to_numpy(np.int64)
            process[at] = cols["pnum"].to_numpy(np.int64)
            kind[at] = cols["kind"].to_numpy(np.int8)
            itime[at] = cols["itime"].to_numpy(np.int64)
            ctime[at] = cols["ctime"].to_numpy(np.int64)
        for pos, r in enumerate(fetched.itertuples(index=False)):
            t = int(r.tid)
            process[t], kind[t], itime[t], ctime[t] = int(r.pnum), int(r.kind), int(r.itime), int(r.ctime)
            if int(r.row) == int(r.irow):
                ipos[t] = pos
            else:
                cpos[t] = pos
        for t in np.unique(fetched["tid"].to_numpy(np.int64)).tolist() if len(fetched) else []:
            values[t] = ops[cpos[t]].value if kind[t] == ti.OK else ops[ipos[t]].value
        return _Table(ops, process, kind, itime, ctime, ipos, cpos, values)

    def _summary(self) -> dict[int, int]:
        """Raise the local engine's MalformedTxn for the history's first malformed micro-op, if any; else return
        how many transactions ended each way (one job for both).

        The local engine checks in stages (a transaction's value, then every micro-op's shape, function and key,
        then written values, duplicate writes, read values), each over the whole history in transaction order;
        the first transaction that fails the first failing stage is checked again locally, for its message.
        """
        from pyspark.sql import functions as F

        c = F.col
        worst = self.mops.filter(c("bad") > 0).agg(F.min(F.struct("bad", "tid")).alias("w")).select(
            F.lit("bad").alias("what"), c("w.bad").cast("long").alias("a"), c("w.tid").alias("b"),
            F.lit(None).cast("long").alias("c"))
        dup = (self.mops.filter((c("f") == ti.WRITE) & (c("idx") >= 0)).groupBy("kenc", "venc")
               .agg(F.sort_array(F.collect_list(F.struct("tid", "idx"))).alias("at"))
               .filter(F.size("at") >= 2)
               .agg(F.min(F.struct(c("at")[1].alias("second"), c("at")[0].alias("first"))).alias("d"))
               .select(F.lit("dup").alias("what"), c("d.first.tid").alias("a"), c("d.second.tid").alias("b"),
                       F.lit(None).cast("long").alias("c")))
        kinds = self.txns.groupBy("kind").count().select(F.lit("kind").alias("what"), c("kind").cast("long")
                                                         .alias("a"), c("count").alias("b"),
                                                         F.lit(None).cast("long").alias("c"))
        rows = worst.unionByName(dup).unionByName(kinds).collect()
        got = {r["what"]: r for r in rows if r["what"] != "kind" and r["a"] is not None}
        code, tid = (int(got["bad"]["a"]), int(got["bad"]["b"])) if "bad" in got else (0, -1)
        if code and code <= ti.BAD_WRITE:
            self._raise_local([tid], code)
        if "dup" in got:
            self._raise_local(sorted({int(got["dup"]["a"]), int(got["dup"]["b"])}), ti.DUPLICATE_WRITE)
        if code:
            self._raise_local([tid], code)
        return {int(r["a"]): int(r["b"]) for r in rows if r["what"] == "kind"}

    def _raise_local(self, tids: list[int], code: int) -> None:
        table = self._table(np.array(tids, dtype=np.int64))
        if code in (ti.NOT_A_LIST, ti.SHORT_COMPLETION):
            t = tids[0]
            pair = [table.ops[int(table.invoke_pos[t])]]
            if table.complete_pos[t] >= 0:
                pair.append(table.ops[int(table.complete_pos[t])])
            collect(pair)
        else:
            for t in range(table.n):
                if table.values[t] is None:
                    table.values[t] = []
            make_inference(self.workload, self.order).infer(table, self.order, table.n)
        t = tids[-1]
        op = table.ops[int(table.invoke_pos[t])]
        raise MalformedTxn("a micro-op of this transaction is malformed", op.index, op.extra.get("line"))


@dataclass
class _Table(TxnTable):
    """A TxnTable that also keeps the micro-ops the inference saw (only those on the chosen keys)."""

    restricted: list[Any] | None = None


def _collect_graph(edges: Any, chain: np.ndarray, n: int, n_nodes: int) -> Graph:
    """The edges, in the local engine's order (by their sort keys), as a Graph."""
    pdf = edges.toPandas()
    cols = {c: pdf[c].to_numpy() for c in pdf.columns}
    k = chain.shape[1]
    src = np.concatenate([cols["src"].astype(np.int64), chain[0]])
    dst = np.concatenate([cols["dst"].astype(np.int64), chain[1]])
    etype = np.concatenate([cols["etype"].astype(np.uint8), np.full(k, PASS, np.uint8)])
    key = np.concatenate([cols["key"].astype(np.int64), np.full(k, -1, np.int64)])
    s0 = np.concatenate([cols["s0"].astype(np.int64), np.full(k, 4, np.int64)])
    s1 = np.concatenate([cols["s1"].astype(np.int64), chain[0]])
    s2 = np.concatenate([cols["s2"].astype(np.int64), np.zeros(k, np.int64)])
    o = np.lexsort((s2, s1, s0))
    return Graph(n, n_nodes, src[o], dst[o], etype[o], key[o])
