"""A transactional history as Spark DataFrames: one row per transaction, one row per micro-op.

Step 1 streams the history (any format ``harness.history`` reads, or ops in memory) into a Parquet file of its
``txn`` ops, validating as the local engine's loading does and numbering the transactions in invocation order
(T0, T1, ...), as :func:`checkers.txn.txns.collect` does. Step 2, in Spark: a window over each process pairs
each invocation with its completion (:func:`transactions`), and the executors parse the micro-ops
(:func:`micro_ops`), keeping keys and values as JSON text so that ``1`` and ``"1"`` stay apart and joins on
them are plain string joins.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from harness.history.op import Op, OpType

OK, INFO, FAIL = 0, 1, 2
"""Outcomes, as :mod:`checkers.txn.txns` codes them."""
READ, WRITE, BAD_F = 0, 1, -1
"""Micro-op kinds (``BAD_F``: neither the workload's write nor ``r``)."""

# Why a transaction's micro-ops are malformed, in the order the local engine checks (its first problem wins).
NOT_A_LIST, SHORT_COMPLETION, BAD_SHAPE, BAD_FUNCTION, BAD_KEY, BAD_WRITE, DUPLICATE_WRITE, BAD_READ = range(1, 9)

WRITE_F = {"list-append": "append", "rw-register": "w"}
"""Each workload's write micro-op."""

_INT64 = (-(1 << 63), (1 << 63) - 1)


def _dumps(value: Any) -> str:
    import orjson

    return orjson.dumps(value, default=str, option=orjson.OPT_NON_STR_KEYS).decode()


def _schema() -> Any:
    import pyarrow as pa

    i, s = pa.int64(), pa.string()
    return pa.schema([("row", i), ("tid", i), ("line", i), ("index", i), ("time", i), ("process", s),
                      ("pnum", i), ("type", s), ("value", s), ("error", s)])


OPS_DDL = ("row long, tid long, line long, index long, time long, process string, pnum long, type string, "
           "value string, error string")
"""The Parquet file's schema, for Spark (given, so reading it needs no job to infer it)."""


def write_txn_parquet(items: Iterable[tuple[int | None, Op]], out: str | Path, *, batch_rows: int = 200_000) -> int:
    """Write the ``txn`` ops of ``(line, op)`` pairs to Parquet; return how many transactions were invoked.

    Columns: ``row`` (the op's position among the txn ops), ``tid`` (an invocation's transaction id, else
    null), ``line``, ``index``, ``time``, ``process`` (JSON), ``pnum`` (the process as a number: an int process
    is itself, any other gets ``-1 - n`` by first appearance, as the local engine numbers them), ``type``,
    ``value`` and ``error`` (JSON).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = _schema()
    names: dict[Any, int] = {}
    cols: dict[str, list[Any]] = {c: [] for c in schema.names}
    row = tid = 0
    with pq.ParquetWriter(str(out), schema, compression="zstd") as writer:
        for line, op in items:
            if op.f != "txn":
                continue
            p = op.process
            cols["row"].append(row)
            invoke = op.type is OpType.INVOKE
            cols["tid"].append(tid if invoke else None)
            tid += invoke
            row += 1
            cols["line"].append(line or None)
            cols["index"].append(op.index)
            cols["time"].append(op.time)
            cols["process"].append(_dumps(p))
            cols["pnum"].append(p if type(p) is int else -1 - names.setdefault(p, len(names)))
            cols["type"].append(op.type.value)
            cols["value"].append(_dumps(op.value))
            cols["error"].append(None if op.error is None else _dumps(op.error))
            if len(cols["row"]) >= batch_rows:
                writer.write_table(pa.Table.from_pydict(cols, schema=schema))
                cols = {c: [] for c in schema.names}
        writer.write_table(pa.Table.from_pydict(cols, schema=schema))
    return tid


def file_items(path: str, fmt: str = "auto") -> Iterator[tuple[int | None, Op]]:
    """``(line, op)`` for each op of a history file, validated (raises ``HistoryError``)."""
    from harness.history.formats import iter_history

    yield from iter_history(path, fmt)


def op_items(ops: Sequence[Op], lines: Sequence[int] | None = None) -> Iterator[tuple[int | None, Op]]:
    """``(line, op)`` for ops in memory: the line from ``lines``, else ``op.extra["line"]``."""
    for i, op in enumerate(ops):
        line = lines[i] if lines is not None else op.extra.get("line")
        yield (int(line) if isinstance(line, int) else None), op


def op_from_row(row: Any) -> Op:
    """The Op an ops row holds (its ``extra`` keeps only its line, as the local engine's loading gives)."""
    import orjson

    extra = {"line": int(row["line"])} if row["line"] is not None else {}
    return Op(int(row["index"]), int(row["time"]), orjson.loads(row["process"]), OpType(row["type"]), "txn", None,
              orjson.loads(row["value"]), None if row["error"] is None else orjson.loads(row["error"]), extra)


def transactions(ops: Any) -> Any:
    """One row per transaction: ``tid, pnum, kind, itime, ctime, irow, crow, ivalue, cvalue``.

    An invocation pairs with its process's next op when that is a completion (else it is ``info``, never
    completed: ``ctime`` and ``crow`` are -1). ``cvalue`` is an ``ok`` completion's value, else null.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    w = Window.partitionBy("pnum").orderBy("row")
    nxt = ops.select("row", "tid", "pnum", "type", "time", "value",
                     F.lead("type").over(w).alias("ntype"), F.lead("time").over(w).alias("ntime"),
                     F.lead("row").over(w).alias("nrow"), F.lead("value").over(w).alias("nvalue"))
    done = F.col("ntype").isNotNull() & (F.col("ntype") != "invoke")
    kind = F.when(done & (F.col("ntype") == "ok"), OK).when(done & (F.col("ntype") == "fail"), FAIL).otherwise(INFO)
    return (nxt.filter(F.col("type") == "invoke")
            .select("tid", "pnum", kind.cast("byte").alias("kind"), F.col("time").alias("itime"),
                    F.when(done, F.col("ntime")).otherwise(-1).alias("ctime"), F.col("row").alias("irow"),
                    F.when(done, F.col("nrow")).otherwise(-1).alias("crow"), F.col("value").alias("ivalue"),
                    F.when(done & (F.col("ntype") == "ok"), F.col("nvalue")).alias("cvalue")))


MOPS_DDL = ("tid long, idx int, f byte, kenc string, kint long, kkind string, venc string, rlist array<string>, "
            "rnull boolean, committed boolean, mop string, bad byte")
"""The micro-op rows :func:`micro_ops` gives (``idx`` -1: a transaction-wide problem, ``bad`` its code)."""


def _mops_schema() -> Any:
    import pyarrow as pa

    s = pa.string()
    return pa.schema([("tid", pa.int64()), ("idx", pa.int32()), ("f", pa.int8()), ("kenc", s), ("kint", pa.int64()),
                      ("kkind", s), ("venc", s), ("rlist", pa.list_(s)), ("rnull", pa.bool_()),
                      ("committed", pa.bool_()), ("mop", s), ("bad", pa.int8())])


def micro_ops(txns: Any, workload: str) -> Any:
    """One row per micro-op (the ok completion's, else the invocation's), parsed in the executors.

    ``f``: :data:`READ`, :data:`WRITE` or :data:`BAD_F`; ``kenc``: the key as JSON; ``kint``: an int key that
    fits in 64 bits; ``kkind``: ``i`` (such an int), ``b`` (a bigger int), ``s`` (a string) or ``x`` (neither);
    ``venc``: a write's value as JSON (rw-register: also a committed read's); ``rlist``: a committed list-append
    read's elements as JSON; ``rnull``: a committed read of nil; ``mop``: the micro-op as JSON; ``bad``: the
    transaction's first problem (0 for none; see the codes above).
    """
    write_f = WRITE_F[workload]
    append = workload == "list-append"

    def parse(batches: Iterator[Any]) -> Iterator[Any]:
        import orjson
        import pyarrow as pa

        schema = _mops_schema()
        cols = schema.names
        for b in batches:
            out: dict[str, list[Any]] = {c: [] for c in cols}
            d = b.to_pydict()
            for tid, kind, ivalue, cvalue in zip(d["tid"], d["kind"], d["ivalue"], d["cvalue"], strict=True):
                _parse_txn(out, tid, kind, orjson.loads(ivalue), None if cvalue is None else orjson.loads(cvalue),
                           write_f, append)
            yield pa.RecordBatch.from_pydict(out, schema=schema)

    return txns.select("tid", "kind", "ivalue", "cvalue").mapInArrow(parse, MOPS_DDL)


def _parse_txn(out: dict[str, list[Any]], tid: int, kind: int, ivalue: Any, cvalue: Any, write_f: str,
               append: bool) -> None:
    """Append one transaction's micro-op rows to ``out`` (see :func:`micro_ops`)."""
    if type(ivalue) is not list:
        _row(out, tid, -1, BAD_F, None, None, "x", None, None, False, False, None, NOT_A_LIST)
        return
    ok = kind == OK
    if ok and (type(cvalue) is not list or len(cvalue) != len(ivalue)):
        _row(out, tid, -1, BAD_F, None, None, "x", None, None, False, False, None, SHORT_COMPLETION)
        return
    mops = cvalue if ok else ivalue
    rows: list[tuple[Any, ...]] = []
    bad = 0
    for idx, m in enumerate(mops):
        if type(m) not in (list, tuple) or len(m) != 3:
            rows.append((idx, BAD_F, None, None, "x", None, None, False, None))
            bad = min(bad or BAD_SHAPE, BAD_SHAPE)
            continue
        f, k, v = m
        code = WRITE if f == write_f else READ if f == "r" else BAD_F
        if code == BAD_F:
            bad = min(bad or BAD_FUNCTION, BAD_FUNCTION)
        tk = type(k)
        if tk is int:
            kkind, kint = ("i", k) if _INT64[0] <= k <= _INT64[1] else ("b", None)
        elif tk is str:
            kkind, kint = "s", None
        else:
            kkind, kint = "x", None
            bad = min(bad or BAD_KEY, BAD_KEY)
        venc = rlist = None
        rnull = False
        if code == WRITE:
            if type(v) not in (int, str):
                bad = min(bad or BAD_WRITE, BAD_WRITE)
            venc = _dumps(v)
        elif code == READ and ok:
            if append:
                if v is None or type(v) in (list, tuple):
                    rnull = v is None
                    rlist = [_dumps(e) for e in v or ()]
                else:
                    bad = min(bad or BAD_READ, BAD_READ)
            elif v is None or type(v) in (int, str):
                rnull = v is None
                venc = None if v is None else _dumps(v)
            else:
                bad = min(bad or BAD_READ, BAD_READ)
        rows.append((idx, code, _dumps(k), kint, kkind, venc, rlist, rnull, _dumps(m)))
    for idx, code, kenc, kint, kkind, venc, rlist, rnull, mop in rows:
        _row(out, tid, idx, code, kenc, kint, kkind, venc, rlist, rnull, ok, mop, bad)


def _row(out: dict[str, list[Any]], tid: int, idx: int, f: int, kenc: str | None, kint: int | None, kkind: str,
         venc: str | None, rlist: list[str] | None, rnull: bool, committed: bool, mop: str | None, bad: int) -> None:
    for name, value in (("tid", tid), ("idx", idx), ("f", f), ("kenc", kenc), ("kint", kint), ("kkind", kkind),
                        ("venc", venc), ("rlist", rlist), ("rnull", rnull), ("committed", committed), ("mop", mop),
                        ("bad", bad)):
        out[name].append(value)


def key_ids(mops: Any) -> Any:
    """``kenc -> kid`` as the local engine numbers keys: by value when every key is a 64-bit int, else by first
    appearance (transaction, then position). The keys are numbered in one partition (there are far fewer keys
    than micro-ops)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    c = F.col
    keys = (mops.filter(c("kenc").isNotNull()).groupBy("kenc")
            .agg(F.min(F.struct("tid", "idx")).alias("first"), F.first("kint").alias("kint"),
                 F.max((c("kkind") != "i").cast("int")).alias("odd")))
    any_odd = keys.agg(F.max("odd").alias("any_odd"))
    by = F.when(c("any_odd") == 1, F.lit(None)).otherwise(c("kint"))
    w = Window.orderBy(by, c("first"))
    return keys.crossJoin(any_odd).select("kenc", (F.row_number().over(w) - 1).cast("long").alias("kid"))
