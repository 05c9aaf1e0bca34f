"""examples/spark/check_on_spark.py under spark-submit, on a real standalone cluster (a master and a worker on
127.0.0.1): the session spark-submit configured is the one the engine uses, and each verdict is the local
engine's. As docs/spark.md shows it; skipped without Java or PySpark."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "examples" / "spark" / "check_on_spark.py"
HISTORIES = REPO / "examples" / "histories"

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("java") is None and not os.environ.get("JAVA_HOME"), reason="needs Java 17+"),
]


def test_spark_submit_checks_on_the_cluster_it_was_given(tmp_path: Path) -> None:
    pytest.importorskip("pyspark")
    from checkers.spark.cluster import LocalCluster, spark_home

    files = [HISTORIES / "register-stale-read.invalid.jsonl", HISTORIES / "kv-append.valid.txt"]
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
               SPARK_LOCAL_IP="127.0.0.1", PYTHONPATH=str(REPO))
    with LocalCluster(cores=1, memory="1g") as cluster:
        out = subprocess.run([str(spark_home() / "bin" / "spark-submit"), "--master", cluster.master_url,
                              "--conf", "spark.ui.enabled=false", str(SCRIPT), *map(str, files)],
                             capture_output=True, text=True, timeout=400, check=False, cwd=tmp_path, env=env,
                             stdin=subprocess.DEVNULL)
    summaries = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    assert out.returncode == 1, out.stdout + out.stderr[-3000:]  # the worst: one history is invalid
    assert [(s["valid"], s["engine"], s["spark_master"]) for s in summaries] == [
        (False, "spark", cluster.master_url), (True, "spark", cluster.master_url)]
    assert summaries[0]["invalid_keys"] == ["x"]
