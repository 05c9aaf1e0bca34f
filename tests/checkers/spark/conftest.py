"""One SparkSession for all Spark tests (it takes ~10 s to start); skipped without Java or PySpark."""

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
        return "Spark tests need Java (no java on PATH and JAVA_HOME unset)"
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return "Spark tests need PySpark (pip install -e '.[dev]')"
    return None


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """A local[2] SparkSession, stopped at the end of the session."""
    reason = spark_missing()
    if reason:
        pytest.skip(reason)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from checkers.spark.engine import get_session, stop_session

    session = get_session("local[2]")
    try:
        yield session
    finally:
        stop_session()
