"""The Spark engine: check histories of tens of millions of ops on a Spark cluster, key by key.

Entry points: :func:`checkers.spark.auto.check_path` (one history with ``--engine auto|local|spark``;
the summary names the engine), :func:`checkers.spark.engine.check_file_spark` (one history file on
Spark, reported as ``fencepost check`` reports it), :func:`checkers.spark.engine.check_parquet_spark`
(a Parquet history, as a :class:`~checkers.linearizability.checker.CheckResult`),
:func:`checkers.spark.stats.history_stats` (latency and throughput in Spark SQL),
:func:`harness.history.parquet.write_parquet` (stream a generated history to Parquet) and
:class:`checkers.spark.cluster.LocalCluster` (a standalone master and worker on 127.0.0.1).
"""
