"""rw-register on Spark: the dependency graph as plain edges, to find the transactions on a cycle, and the keys
where the local engine must look for anomalies that need no cycle.

The edges are the ones :mod:`checkers.txn.rw_register` infers, one per pair instead of its chains of virtual
nodes: the writer of the value read ``wr->`` the reader (reads joined to writes by key and value); a reader of
nil ``rw->`` every other installer of the key (a transaction whose last write of the key is a version); a
transaction that read ``x1`` and then wrote the key follows ``x1``: ``x1``'s writer ``ww->`` it, and every other
reader of ``x1`` ``rw->`` it; under a strict model a reader of ``x1`` ``rw->`` every installer invoked after
``x1``'s writer committed, under a strong-session one the next installer on the writer's process. With the
process or real-time edges, the strongly connected components of this graph hold the same transactions as the
local engine's.
"""

from __future__ import annotations

from typing import Any

from checkers.spark.txn_input import FAIL, OK, READ, WRITE


def _pair(src: Any, dst: Any) -> list[Any]:
    return [src.cast("long").alias("src"), dst.cast("long").alias("dst")]


def register_graph(m: Any, txns: Any, order: str) -> tuple[Any, Any, list[Any]]:
    """``(edges, flagged, cached)``: ``src, dst`` rows; the keys (``kid``) where a non-cycle anomaly may be (a
    superset: the local engine decides); the DataFrames persisted on the way. ``m`` is
    :func:`checkers.spark.txn_append.with_groups`' output."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    c = F.col
    info = txns.select(c("tid").alias("wtx"), c("kind").alias("wkind"), c("ctime").alias("wdone"),
                       c("pnum").alias("wproc"))
    writes = (m.filter(c("f") == WRITE)
              .select("kid", "venc", c("tid").alias("wtx"), (c("w_after") == 0).alias("wfinal"))
              .join(info, "wtx"))
    reads = (m.filter((c("f") == READ) & c("committed"))
             .select("tid", "idx", "kid", "venc", "rnull", "gpos", "w_before", "w_after",
                     ((c("w_before") == 0) & (c("gpos") == 0)).alias("first"))
             .join(writes, ["kid", "venc"], "left").persist())
    inst = (writes.filter(c("wfinal") & (c("wkind") != FAIL))
            .join(txns.select(c("tid").alias("wtx"), c("itime")), "wtx")
            .select("kid", c("wtx").alias("itx"), "itime", c("wproc").alias("iproc")))
    seen = reads.filter(c("first") & c("wtx").isNotNull())
    parts = [seen.filter((c("wtx") != c("tid")) & (c("wkind") != FAIL)).select(*_pair(c("wtx"), c("tid")))]
    parts.append(reads.filter(c("first") & c("rnull")).join(inst, "kid").filter(c("itx") != c("tid"))
                 .select(*_pair(c("tid"), c("itx"))))
    succ = seen.filter(c("w_after") > 0)
    parts.append(succ.filter(c("wkind") != FAIL).select(*_pair(c("wtx"), c("tid"))))
    parts.append(seen.select("kid", "venc", c("tid").alias("reader"))
                 .join(succ.select("kid", "venc", c("tid").alias("succ")), ["kid", "venc"])
                 .filter(c("reader") != c("succ")).select(*_pair(c("reader"), c("succ"))))
    if order == "realtime":
        parts.append(seen.filter(c("wfinal") & (c("wkind") == OK)).join(inst, "kid")
                     .filter((c("itime") > c("wdone")) & (c("itx") != c("tid"))).select(*_pair(c("tid"), c("itx"))))
    elif order == "process":
        w = Window.partitionBy("kid", "iproc").orderBy("itx")
        nxt = inst.select("kid", c("itx").alias("wtx"), F.lead("itx").over(w).alias("after"))
        parts.append(seen.filter(c("wkind") == OK).join(nxt, ["kid", "wtx"])
                     .filter(c("after").isNotNull() & (c("after") != c("tid"))).select(*_pair(c("tid"), c("after"))))
    edges = parts[0]
    for p in parts[1:]:
        edges = edges.unionByName(p)
    return edges, _flags(m, reads), [reads]


def _flags(m: Any, reads: Any) -> Any:
    """Keys of: a value nobody wrote (garbage-read), an external read of a failed write (G1a, dirty-update), of
    a write its writer overwrote (G1b), of the reader's own later write (future-read); a read unlike its
    transaction's previous micro-op on the key (internal); two first reads of one version, each written after
    (lost-update)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    c = F.col
    ext = c("w_before") == 0
    found = c("wtx").isNotNull()
    parts = [
        reads.filter(~c("rnull") & ~found).select("kid"),
        reads.filter(ext & (c("wkind") == FAIL)).select("kid"),
        reads.filter(ext & found & ~c("wfinal") & (c("wtx") != c("tid")) & (c("wkind") != FAIL)).select("kid"),
        reads.filter(ext & (c("wtx") == c("tid"))).select("kid"),
    ]
    w = Window.partitionBy("tid", "kid").orderBy("idx")
    ok = m.filter(c("committed")).select("tid", "kid", "idx", "f", "venc", F.lag("venc").over(w).alias("pv"),
                                         F.row_number().over(w).alias("n"))
    parts.append(ok.filter((c("f") == READ) & (c("n") > 1) & ~c("venc").eqNullSafe(c("pv"))).select("kid"))
    version = F.when(found, c("venc"))
    parts.append(reads.filter(c("first") & (c("w_after") > 0)).groupBy("kid", version.alias("v"))
                 .agg(F.countDistinct("tid").alias("n")).filter(c("n") >= 2).select("kid"))
    out = parts[0]
    for p in parts[1:]:
        out = out.unionByName(p)
    return out.distinct()
