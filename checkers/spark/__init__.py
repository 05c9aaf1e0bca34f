"""The Spark engine: check histories of tens of millions of ops on a Spark cluster, key by key.

Entry points: :func:`checkers.spark.engine.check_file_spark` (one history file, as ``fencepost check``
reports it), :func:`checkers.spark.engine.check_parquet_spark` (a Parquet history, as a
:class:`~checkers.linearizability.checker.CheckResult`), :func:`checkers.spark.stats.history_stats`
(latency and throughput in Spark SQL) and :class:`checkers.spark.writer.FastParquetWriter` (stream a
generated history to Parquet).
"""
