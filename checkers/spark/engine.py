"""The Spark engine's driver: read a Parquet history, shuffle it by key, check keys in the executors.

Steps: (1) without ``model_name``, one pass over the client invocations' ``f`` to pick the model;
(2) ``repartition(key)`` + ``sortWithinPartitions(key, index)`` and ``mapInArrow`` with
:mod:`checkers.spark.task`, which pairs and checks each key as the local engine does; (3) collect the
verdict rows, order them by each key's first op, and, for counterexamples, one pass over the
invocations' indices to give their ops the history-wide call ids the local engine shows.

The result is the local engine's :class:`CheckResult`, field for field. Every key is checked (the
local engine's ``--all-violations``): with thousands of executors there is no first violation to stop
at. A completion belongs to its process's last invocation: when a key's completion finds no open
invocation there (it carries no key, or another key), the check runs again with a window over each
process giving every completion its invocation's key.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import sys
import time
from typing import TYPE_CHECKING, Any

from checkers.linearizability.checker import CheckResult, PartitionVerdict, merge

if TYPE_CHECKING:
    from checkers.linearizability.run import FileOptions, FileReport

COLUMNS = ("index", "time", "process", "type", "f", "key", "value", "error", "extra")
ROWS_PER_PARTITION = 1_000_000
"""Shuffle partitions hold about this many rows (and at least four per core)."""
NULL_KEY = "\x00null"

_SESSION: Any = None


def get_session(master: str | None = None, *, app: str = "fencepost", conf: dict[str, str] | None = None) -> Any:
    """The SparkSession the engine uses, started once per process.

    The master is, in order: ``master`` (an ``sc://`` URL means Spark Connect); ``SPARK_REMOTE`` (Spark
    Connect, ``sc://host:15002``, which needs ``pyspark[connect]``: :data:`CONNECT_MODULES`);
    ``spark.master`` from ``spark-submit --master`` (when spark-submit runs this process) or from
    ``spark-defaults.conf`` (in ``SPARK_CONF_DIR``, else ``SPARK_HOME/conf``); else ``local[*]``. The last
    two are spark-submit's own rules, applied when the driver's JVM starts: a JVM keeps its settings for
    the life of the process, so after :func:`stop_session`, a session without a master gets the one the
    first session's JVM was started with. Executors run ``PYSPARK_PYTHON``, which defaults to this
    interpreter (Fencepost must be installed there). ``conf`` adds Spark settings, such as
    ``spark.executor.memory``.
    """
    global _SESSION
    if _SESSION is not None:
        return _SESSION
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName(app)
    remote = master if master is not None and master.startswith("sc://") else None
    if remote is None and master is None:
        remote = os.environ.get("SPARK_REMOTE") or None
    if remote is not None:
        _connect_ready(remote)
        builder = builder.remote(remote)
    elif master is not None:
        builder = builder.master(master)
    # Else no master here: the driver's JVM is started by spark-submit (PySpark's launcher runs
    # bin/spark-submit with the builder's settings as --conf, or spark-submit started this process), and
    # spark-submit resolves spark.master itself: its --master, else spark-defaults.conf, else local[*].
    # A master set here would override it, and it cannot be asked for beforehand through public API:
    # SparkConf() only reads the JVM's settings once a JVM exists.
    builder = (builder.config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.execution.arrow.pyspark.enabled", "true")
               .config("spark.sql.adaptive.enabled", "false")
               .config("spark.executorEnv.PYSPARK_PYTHON", os.environ["PYSPARK_PYTHON"]))
    for k, v in (conf or {}).items():
        builder = builder.config(k, v)
    _SESSION = builder.getOrCreate()
    with contextlib.suppress(Exception):  # Spark Connect has no SparkContext
        _SESSION.sparkContext.setLogLevel("ERROR")
    return _SESSION


CONNECT_MODULES = {"grpc": "grpcio", "grpc_status": "grpcio-status", "google.protobuf": "protobuf",
                   "google.rpc": "googleapis-common-protos"}
"""What PySpark's Spark Connect client imports beyond PySpark itself (``pip install 'pyspark[connect]'``)."""


def _connect_ready(remote: str) -> None:
    """Raise ValueError, naming what is missing, when the Spark Connect client cannot be imported."""
    import importlib.util

    missing = []
    for module, package in CONNECT_MODULES.items():
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:  # a parent package is missing
            found = False
        if not found:
            missing.append(package)
    if missing:
        raise ValueError(f"Spark Connect ({remote}) needs {', '.join(missing)}, not installed: "
                         "pip install 'pyspark[connect]', or unset SPARK_REMOTE to start a local Spark")


def stop_session() -> None:
    """Stop the engine's SparkSession, if one was started."""
    global _SESSION
    if _SESSION is not None:
        _SESSION.stop()
        _SESSION = None


def read_history(spark: Any, path: str) -> Any:
    """The Parquet history as a DataFrame with all nine columns (absent JSON columns are null)."""
    from pyspark.sql import functions as F

    df = spark.read.parquet(path)
    missing = [c for c in ("index", "time", "process", "type", "f") if c not in df.columns]
    if missing:
        raise ValueError(f"{path}: Parquet history lacks column(s) {', '.join(missing)}")
    return df.select(*[F.col(c) if c in df.columns else F.lit(None).cast("string").alias(c) for c in COLUMNS])


def check_parquet_spark(path: str, model_name: str | None = None, init: Any = None, *, spark: Any = None,
                        spark_master: str | None = None, timeout: float | None = None, explain: bool = True,
                        fmt: str = "parquet", nil_read: str | None = None) -> CheckResult:
    """Check a Parquet history on Spark, key by key.

    Args:
        path: the Parquet file (or folder); executors must be able to read it too.
        model_name: a model name; None picks one as ``fencepost check`` does (:func:`choose_model`).
        init: the model's initial value.
        spark: a SparkSession; None uses :func:`get_session` with ``spark_master``.
        spark_master: the master URL when ``spark`` is None.
        timeout: seconds before undecided keys become unknown.
        explain: attach counterexamples to the failures.
        fmt: the format the history came in (for the model choice and the nil-read rule).
        nil_read: ``any`` or ``absent``, what an ok read of nil means; None: ``fmt``'s rule
            (:func:`harness.history.semantics.semantics_for`), as the local engine takes it.

    Returns:
        The local engine's result: every key checked, invalid keys in order of their first op.

    Raises:
        ValueError: ``nil_read`` is neither ``any`` nor ``absent``.
    """
    from pyspark.sql import functions as F

    from checkers.models import choose_model, make_model
    from checkers.spark import task
    from harness.history.semantics import semantics_for

    start = time.monotonic()
    rule = semantics_for(fmt, nil_read).nil_read
    spark = spark or get_session(spark_master)
    df = read_history(spark, path)
    is_call = (F.col("type") == "invoke") & (F.col("process") != "nemesis")
    name = model_name or choose_model(fmt, _functions(df.filter(is_call).select("f")))
    make_model(name, init, nil_read=rule)  # an unknown name fails here, in the driver
    deadline = None if timeout is None else time.time() + timeout
    checker = task.make_checker(name, init, deadline, explain, nil_read=rule)
    try:
        parallelism = int(spark.sparkContext.defaultParallelism)
    except Exception:  # Spark Connect has no SparkContext
        parallelism = int(spark.conf.get("spark.default.parallelism", "8") or 8)
    n_parts = max(parallelism, -(-_rows(spark, df, path) // ROWS_PER_PARTITION))
    ops = df.filter(F.col("process") != "nemesis")
    verdicts = _run(ops, checker, n_parts, by_invocation=False)
    if int(verdicts["strays"].sum()):
        verdicts = _run(ops, checker, n_parts, by_invocation=True)
    verdicts = verdicts.sort_values("first_index", kind="stable")
    result = CheckResult(True, name, int(verdicts["calls"].sum()), partitions=len(verdicts), checked=len(verdicts))
    failures = _failures(verdicts)
    if explain and failures:
        _global_call_ids(df.filter(is_call).select("index"), failures)
    from harness.history.parquet import Decoder

    decode = Decoder()
    states = {"true": True, "false": False}
    result.valid = merge([states.get(v, "unknown") for v in verdicts["valid"].unique()]) if len(verdicts) else True
    result.invalid_keys = [f.label for f in failures]
    result.unknown_keys = [decode(k) for k in verdicts.loc[verdicts["valid"] == "unknown", "key"]]
    result.failures = failures
    result.seconds = time.monotonic() - start
    return result


def _functions(fs: Any) -> set[str]:
    """The distinct values of a one-column string DataFrame, gathered without a shuffle."""

    def distinct(batches: Any) -> Any:
        import pyarrow as pa
        import pyarrow.compute as pc

        seen: set[str] = set()
        for b in batches:
            seen.update(pc.unique(b.column(0)).to_pylist())
        yield pa.RecordBatch.from_pydict({"f": sorted(s for s in seen if s is not None)})

    return {r[0] for r in fs.mapInArrow(distinct, "f string").collect()}


def _rows(spark: Any, df: Any, path: str) -> int:
    """Rows in the history: from the Parquet footer when the driver can read it, else counted."""
    try:
        import pyarrow.parquet as pq

        return int(pq.ParquetFile(path).metadata.num_rows)
    except Exception:  # a folder, a remote file system: let Spark count
        return int(df.count())


def _run(ops: Any, checker: Any, n_parts: int, *, by_invocation: bool) -> Any:
    """Shuffle by key, check in the executors, and collect the verdict rows as pandas."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from checkers.spark.task import spark_ddl

    if by_invocation:
        w = Window.partitionBy("process").orderBy("index").rowsBetween(Window.unboundedPreceding, 0)
        invoked = F.when(F.col("type") == "invoke", F.coalesce(F.col("key"), F.lit(NULL_KEY)))
        owner = F.last(invoked, ignorenulls=True).over(w)
        key = F.when(owner == NULL_KEY, F.lit(None).cast("string")).otherwise(owner)
        ops = ops.withColumn("key", key).select(*COLUMNS)
    shuffled = ops.repartition(n_parts, "key").sortWithinPartitions("key", "index")
    return shuffled.mapInArrow(checker, spark_ddl()).toPandas()


def _failures(verdicts: Any) -> list[PartitionVerdict]:
    """The invalid keys' verdicts, counterexamples unpickled, in order of their first op."""
    from harness.history.parquet import Decoder

    decode = Decoder()
    out = []
    for row in verdicts[verdicts["valid"] == "false"].itertuples(index=False):
        cex = None if row.cex is None else pickle.loads(row.cex)
        out.append(PartitionVerdict(decode(row.key), False, int(row.ops), int(row.pruned), row.method,
                                    int(row.nodes), cex))
    return out


def _global_call_ids(invokes: Any, failures: list[PartitionVerdict]) -> None:
    """Renumber counterexample ops by their call's position in the whole history, as the local engine does.

    Each op's call id becomes the number of client invocations before it, counted in the executors.
    """
    import numpy as np

    marks = sorted({v.call_line for f in failures if f.counterexample for v in f.counterexample.ops})
    if not marks:
        return
    bounds = np.array(marks, dtype=np.int64)

    def histogram(batches: Any) -> Any:
        import numpy as np
        import pyarrow as pa

        counts = np.zeros(len(bounds) + 1, dtype=np.int64)
        for b in batches:
            idx = b.column(0).to_numpy(zero_copy_only=False)
            counts += np.bincount(np.searchsorted(bounds, idx, side="right"), minlength=len(bounds) + 1)
        yield pa.RecordBatch.from_pydict({"bin": list(range(len(counts))), "n": counts.tolist()})

    counts = np.zeros(len(bounds) + 1, dtype=np.int64)
    for r in invokes.mapInArrow(histogram, "bin long, n long").collect():
        counts[r[0]] += r[1]
    before = dict(zip(marks, np.cumsum(counts)[: len(marks)].tolist(), strict=True))
    for f in failures:
        if f.counterexample:
            for v in f.counterexample.ops:
                v.call_id = before[v.call_line]


def check_file_spark(path: str, opts: FileOptions, *, spark_master: str | None = None,
                     spark: Any = None) -> FileReport:
    """Check one history file on Spark, reported as :func:`checkers.linearizability.run.check_file` does.

    JSONL and EDN histories are converted to Parquet first (streaming, beside a temporary folder).
    The model reads nil by the file's rule (``opts.nil_read``, else the format's), as the local engine's
    does, and the summary names it (``semantics``); it gains ``engine: "spark"`` and ``spark_master``.
    Problems become ``errors``.
    """
    import tempfile

    from checkers.linearizability.run import FileReport, summarise
    from checkers.models import ModelError
    from checkers.spark.convert import to_parquet
    from harness.history.errors import HistoryError, Problem
    from harness.history.formats import detect_format
    from harness.history.semantics import semantics_for

    start = time.monotonic()
    warnings: list[Problem] = []
    try:
        fmt = detect_format(path) if opts.fmt == "auto" else opts.fmt
        semantics = semantics_for(fmt, opts.nil_read)
        with tempfile.TemporaryDirectory(prefix="fencepost-spark-") as tmp:
            parquet = path if fmt == "parquet" else to_parquet(path, os.path.join(tmp, "history.parquet"), fmt,
                                                               warnings=warnings)
            result = check_parquet_spark(parquet, opts.model, opts.init, spark=spark, spark_master=spark_master,
                                         timeout=opts.timeout, explain=opts.explain, fmt=fmt,
                                         nil_read=semantics.nil_read)
    except HistoryError as e:
        return FileReport(path, None, {"path": path, "valid": None, "engine": "spark",
                                       "error": str(e.problems[0])}, errors=[str(p) for p in e.problems])
    except (ModelError, ValueError) as e:
        return FileReport(path, None, {"path": path, "valid": None, "engine": "spark", "error": f"{path}: {e}"},
                          errors=[f"{path}: {e}"])
    summary = summarise(path, fmt, result, time.monotonic() - start)
    summary["semantics"] = semantics.to_dict()
    summary["warnings"] = [str(w) for w in warnings]  # the conversion's, as the local engine's loading gives
    session = spark or _SESSION
    summary["engine"] = "spark"
    summary["spark_master"] = session.conf.get("spark.master", None) if session is not None else spark_master
    return FileReport(path, result.valid, summary,
                      [f.counterexample for f in result.failures if f.counterexample is not None])
