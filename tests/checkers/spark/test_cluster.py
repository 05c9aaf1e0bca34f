"""Checks run on a real standalone cluster: the worker's executors do the checking."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from checkers.gen_history import HistoryGenerator
from checkers.linearizability.run import FileOptions
from checkers.spark.engine import check_file_spark
from harness.history.parquet import write_parquet

pytestmark = pytest.mark.spark


def test_check_runs_on_the_standalone_cluster(spark: Any, spark_cluster: Any, tmp_path: Path) -> None:
    assert spark.conf.get("spark.master") == spark_cluster.master_url
    gen = HistoryGenerator(ops=5_000, keys=200, seed=11, anomalies=3)
    path = tmp_path / "h.parquet"
    write_parquet(gen, path)
    report = check_file_spark(str(path), FileOptions(all_violations=True), spark=spark)
    assert report.valid is False
    assert sorted(report.summary["invalid_keys"]) == sorted(gen.injected)
    assert report.summary["engine"] == "spark"
    assert report.summary["spark_master"] == spark_cluster.master_url
    assert report.summary["ops"] == 5_000 and report.summary["partitions"] == 200
    status = spark_cluster.status()
    assert status["aliveworkers"] == 1
    apps = status["activeapps"]
    assert len(apps) == 1 and apps[0]["cores"] == 2  # the executors are the worker's
