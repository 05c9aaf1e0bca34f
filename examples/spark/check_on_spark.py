"""Check histories on the Spark cluster that ``spark-submit`` runs this on; exit with Fencepost's codes.

    export PYSPARK_PYTHON=/path/to/venv/bin/python       # a Python with Fencepost, on every node
    spark-submit --master spark://host:7077 examples/spark/check_on_spark.py hdfs:///histories/h.parquet

The session is the one spark-submit configured (its ``--master`` and every ``--conf``) and is handed to
the engine. Each history's summary is printed as one JSON line, as ``fencepost check --json`` prints it;
the exit code is the worst verdict (0 valid, 1 invalid, 2 unknown, 3 error).
"""

from __future__ import annotations

import json
import sys

from pyspark.sql import SparkSession

from checkers.linearizability.run import FileOptions
from checkers.spark.engine import check_file_spark
from harness.cli.exit_codes import ERROR, for_validity, worst


def main(paths: list[str]) -> int:
    """Check each history in ``paths`` on Spark; the worst exit code."""
    spark = SparkSession.builder.appName("fencepost").getOrCreate()
    codes = []
    try:
        for path in paths:
            report = check_file_spark(path, FileOptions(), spark=spark)
            print(json.dumps(report.summary, default=str), flush=True)
            codes.append(ERROR if report.valid is None else for_validity(report.valid))
    finally:
        spark.stop()
    return worst(codes)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
