"""One Spark session for all Spark tests, on a real standalone cluster (a master and one worker on
127.0.0.1, started here); skipped without Java or PySpark. Starting it takes tens of seconds."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from typing import Any

import pytest


def spark_missing() -> str | None:
    """Why Spark tests cannot run here, or None."""
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        return "Spark tests need Java 17+ (no java on PATH and JAVA_HOME unset)"
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return "Spark tests need PySpark (pip install -e '.[dev]')"
    return None


@pytest.fixture(scope="session")
def spark_cluster() -> Iterator[Any]:
    """A standalone master and worker (2 cores, 2 GiB), stopped at the end of the session."""
    reason = spark_missing()
    if reason:
        pytest.skip(reason)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from checkers.spark.cluster import LocalCluster

    with LocalCluster(cores=2, memory="2g") as cluster:
        yield cluster


@pytest.fixture(scope="session")
def spark(spark_cluster: Any) -> Iterator[Any]:
    """A SparkSession on the standalone cluster; stopped before the cluster is."""
    from checkers.spark.engine import get_session, stop_session

    session = get_session(spark_cluster.master_url, conf={
        "spark.executor.memory": "1g", "spark.cores.max": "2", "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1"})
    try:
        yield session
    finally:
        stop_session()
