"""``--engine auto|local|spark``: pick the engine for a history by its size, and check it with that engine.

A SparkSession takes about 10 s to start (over a minute on a loaded 2-core machine). Below
:data:`AUTO_MIN_EVENTS` events the local engine finishes before Spark would have started. Above it,
on one 2-core machine, the two are now close: the local engine reads and checks a big Parquet or
JSONL file in shares on every core (:mod:`checkers.linearizability.sharded`), and on a 1,000,000-op
history took 12 s against Spark's 17 s (``fencepost bench spark``, medians of 3).
Spark wins with more cores than one machine has, and when the local engine would need more memory
than the machine has.
"""

from __future__ import annotations

import os
import shutil
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from checkers.linearizability.run import FileOptions, FileReport

ENGINES = ("auto", "local", "spark")
AUTO_MIN_EVENTS = 1_000_000
"""Histories with at least this many events (about 500,000 ops) go to Spark under ``auto``."""
BYTES_PER_EVENT = 90
"""A JSONL or EDN event's typical size, to estimate the events of a text history."""


def estimate_events(path: str) -> int:
    """Events in the history: exact for Parquet (from the footer), estimated from the size otherwise."""
    try:
        with open(path, "rb") as fh:
            if fh.read(4) == b"PAR1":
                import pyarrow.parquet as pq

                return int(pq.ParquetFile(path).metadata.num_rows)
        return os.path.getsize(path) // BYTES_PER_EVENT
    except OSError:
        return 0
    except Exception:  # a damaged Parquet file: the local engine reports it best
        return 0


def spark_available() -> bool:
    """True when PySpark imports and Java can be found."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return False
    return shutil.which("java") is not None or bool(os.environ.get("JAVA_HOME"))


def choose_engine(path: str, engine: str = "auto") -> str:
    """``local`` or ``spark`` for ``path``: ``auto`` picks Spark at :data:`AUTO_MIN_EVENTS` events or more."""
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}")
    if engine != "auto":
        return engine
    return "spark" if estimate_events(path) >= AUTO_MIN_EVENTS and spark_available() else "local"


def check_path(path: str, opts: FileOptions, *, engine: str = "auto", spark_master: str | None = None) -> FileReport:
    """Check one history with the chosen engine; the summary names it (``engine``: local or spark)."""
    from checkers.linearizability.run import check_file
    from checkers.spark.engine import check_file_spark

    chosen = choose_engine(path, engine)
    if chosen == "spark":
        return check_file_spark(path, opts, spark_master=spark_master)
    report = check_file(path, opts)
    report.summary["engine"] = "local"
    return report
