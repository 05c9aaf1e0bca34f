"""list-append on Spark: each key's version order, the ww / wr / rw edges it implies, and the keys where the
local engine must look for anomalies that need no cycle.

As :mod:`checkers.txn.list_append` infers them: a key's version order is its longest committed read (the first
such read on a tie); every other read must be a prefix of it (``slice`` and compare). The elements of the
version orders are joined to the appends by key and value to find their writers; an element that a failed
transaction appended, or nobody did, is not clean, and edges skip it. ww joins each clean element to the next
clean one; a transaction's external read of a key (before it appends to the key itself) gives wr from the
writer of its last element (when clean) and rw to the writer of the first clean element after its end. Each
edge carries a sort key that puts it where the local engine's edge arrays have it, so the cycle search sees
the same graph.
"""

from __future__ import annotations

from typing import Any

from checkers.spark.txn_input import FAIL, READ, WRITE
from checkers.txn.inference import RW, WR, WW

EDGE_COLUMNS = ("src", "dst", "etype", "key", "s0", "s1", "s2")
"""Every edge DataFrame's columns: the edge, and its place in the local engine's order (``s0, s1, s2``)."""


def with_groups(mops: Any, kids: Any) -> Any:
    """Micro-ops with their key id and, within their transaction's micro-ops on the same key: the writes before
    (``w_before``) and after (``w_after``) each, its position (``gpos``) and the reads up to it (``seg``)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    w = Window.partitionBy("tid", "kid").orderBy("idx")
    is_w = (F.col("f") == WRITE).cast("int")
    is_r = (F.col("f") == READ).cast("int")
    upto = F.sum(is_w).over(w.rowsBetween(Window.unboundedPreceding, 0))
    total = F.sum(is_w).over(Window.partitionBy("tid", "kid"))
    return (mops.filter(F.col("idx") >= 0).join(kids, "kenc")
            .withColumn("w_before", upto - is_w)
            .withColumn("w_after", total - upto)
            .withColumn("gpos", F.row_number().over(w) - 1)
            .withColumn("seg", F.sum(is_r).over(w.rowsBetween(Window.unboundedPreceding, 0))))


def _edge(src: Any, dst: Any, etype: int, key: Any, s0: int, s1: Any, s2: Any) -> list[Any]:
    from pyspark.sql import functions as F

    return [src.cast("long").alias("src"), dst.cast("long").alias("dst"), F.lit(etype).cast("byte").alias("etype"),
            key.cast("long").alias("key"), F.lit(s0).cast("byte").alias("s0"), s1.cast("long").alias("s1"),
            s2.cast("long").alias("s2")]


def append_graph(m: Any, txns: Any) -> tuple[Any, Any, list[Any]]:
    """``(edges, flagged keys, cached)`` of a list-append history; ``m`` is :func:`with_groups`' output.

    ``edges`` has :data:`EDGE_COLUMNS`; ``flagged`` one column ``kid``: every key where a non-cycle anomaly may be
    (a superset: the local engine decides); ``cached`` the DataFrames persisted on the way (to unpersist).
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    c = F.col
    appends = m.filter(c("f") == WRITE).select("kid", c("venc").alias("eenc"), c("tid").alias("writer"),
                                                (c("w_after") > 0).alias("inter"))
    reads = m.filter((c("f") == READ) & c("committed")).select(
        "tid", "idx", "kid", "rlist", F.size("rlist").alias("rlen"), "w_before", "w_after", "gpos", "seg")
    longest = (reads.groupBy("kid")
               .agg(F.max(F.struct(c("rlen"), (-c("tid")).alias("nt"), (-c("idx")).alias("ni"), c("rlist")))
                    .alias("L"))
               .select("kid", c("L.rlist").alias("lrl"), (-c("L.nt")).alias("ltid")))
    kinds = txns.select(c("tid").alias("writer"), c("kind").alias("wkind"))
    elems = (longest.select("kid", F.posexplode("lrl").alias("pos", "eenc"))
             .join(appends, ["kid", "eenc"], "left").join(kinds, "writer", "left")
             .withColumn("clean", c("writer").isNotNull() & (c("wkind") != FAIL)))
    # The nearest clean writer at or after each position: the last one seen walking down from the end.
    after = Window.partitionBy("kid").orderBy(F.desc("pos")).rowsBetween(Window.unboundedPreceding, 0)
    elems = elems.withColumn("next_clean", F.last(F.when(c("clean"), c("writer")), ignorenulls=True).over(after))
    elems = elems.persist()
    prev = Window.partitionBy("kid").orderBy("pos")
    ww = (elems.filter(c("clean"))
          .select("kid", "pos", "writer", F.lag("writer").over(prev).alias("pw"), F.lag("pos").over(prev).alias("pp"))
          .filter(c("pw").isNotNull() & (c("pw") != c("writer")))
          .select(*_edge(c("pw"), c("writer"), WW, c("kid"), 0, c("kid"), c("pp"))))
    r = (reads.join(longest, "kid")
         .withColumn("compat", F.slice("lrl", 1, c("rlen")) == c("rlist"))
         .withColumn("ext", c("compat") & (c("w_before") == 0)).persist())
    at_last = (r.filter(c("compat") & (c("rlen") > 0)).withColumn("pos", c("rlen") - 1)
               .join(elems.select("kid", "pos", c("writer").alias("lw"), c("clean").alias("lclean"),
                                  c("inter").alias("linter"), c("wkind").alias("lkind")), ["kid", "pos"]))
    wr = (at_last.filter(c("ext") & c("lclean") & (c("lw") != c("tid")))
          .select(*_edge(c("lw"), c("tid"), WR, c("kid"), 1, c("tid"), c("idx"))))
    nxt = (r.filter(c("ext")).withColumn("pos", c("rlen"))
           .join(elems.select("kid", "pos", "next_clean"), ["kid", "pos"])
           .filter(c("next_clean").isNotNull() & (c("next_clean") != c("tid")))
           .select(*_edge(c("tid"), c("next_clean"), RW, c("kid"), 2, c("tid"), c("idx"))))
    flagged = _flags(m, r, elems, longest, at_last)
    return ww.unionByName(wr).unionByName(nxt), flagged, [elems, r]


def _flags(m: Any, r: Any, elems: Any, longest: Any, at_last: Any) -> Any:
    """Keys where a non-cycle anomaly may be: an incompatible read, an element aborted or appended by nobody
    (G1a, garbage-read, dirty-update), an intermediate element read last (G1b), a duplicate element, a read of
    the reader's own later append (future-read), two external readers of one version that both append after
    (lost-update), a read that disagrees with its transaction's earlier micro-ops (internal)."""
    from pyspark.sql import functions as F

    c = F.col
    parts = [
        r.filter(~c("compat")).select("kid"),
        elems.filter(c("writer").isNull() | (c("wkind") == FAIL)).select("kid"),
        at_last.filter(c("linter") & (c("lw") != c("tid")) & (c("lkind") != FAIL)).select("kid"),
        longest.filter(F.size(F.array_distinct("lrl")) < F.size("lrl")).select("kid"),
    ]
    rmw = r.filter(c("ext") & (c("w_after") > 0))
    own = elems.filter(c("writer").isNotNull()).groupBy("kid", c("writer").alias("tid")).agg(F.min("pos").alias("mp"))
    parts.append(rmw.join(own, ["kid", "tid"]).filter(c("mp") < c("rlen")).select("kid"))
    parts.append(rmw.groupBy("kid", "rlen").agg(F.countDistinct("tid").alias("n")).filter(c("n") >= 2)
                 .select("kid"))
    parts.append(_internal_flags(m))
    out = parts[0]
    for p in parts[1:]:
        out = out.unionByName(p)
    return out.distinct()


def _internal_flags(m: Any) -> Any:
    """Keys with a committed read, not its transaction's first micro-op on the key, that is not its previous read
    of the key plus its appends since, or (with no read before) does not end with its appends so far."""
    from pyspark.sql import functions as F

    c = F.col
    ok = m.filter(c("committed"))
    appended = (ok.filter(c("f") == WRITE).groupBy("tid", "kid", "seg")
                .agg(F.sort_array(F.collect_list(F.struct("idx", "venc"))).alias("a"))
                .select("tid", "kid", "seg", c("a.venc").alias("since")))
    reads = ok.filter(c("f") == READ).select("tid", "kid", "seg", "gpos", "rlist")
    late = reads.filter(c("gpos") > 0)
    prev_read = reads.select("tid", "kid", (c("seg") + 1).alias("seg"), c("rlist").alias("prev"))
    prev_since = appended.select("tid", "kid", (c("seg") + 1).alias("seg"), "since")
    j = late.join(prev_read, ["tid", "kid", "seg"], "left").join(prev_since, ["tid", "kid", "seg"], "left")
    since = F.coalesce(c("since"), F.array().cast("array<string>"))
    n, k = F.size("rlist"), F.size(since)
    known_bad = c("prev").isNotNull() & (c("rlist") != F.concat(c("prev"), since))
    tail = F.slice("rlist", F.greatest(n - k + 1, F.lit(1)), k)
    mine_bad = c("prev").isNull() & (k > 0) & ((n < k) | (tail != since))
    return j.filter(known_bad | mine_bad).select("kid")
