"""`fencepost check --engine` and `gen-history --out FILE.parquet`, end to end through the CLI."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FENCEPOST = [sys.executable, "-m", "harness.cli.main"]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*FENCEPOST, *args], capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def parquet_history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("gen") / "h.parquet"
    made = run("gen-history", "--ops", "20000", "--keys", "40", "--processes", "8", "--seed", "9",
               "--anomalies", "3", "--out", str(out))
    assert made.returncode == 0, made.stderr
    assert out.read_bytes()[:4] == b"PAR1"
    return out


def verdict(result: subprocess.CompletedProcess[str]) -> dict[str, object]:
    line: dict[str, object] = json.loads(result.stdout.strip().splitlines()[-1])
    return line


def test_local_engine_is_named_and_finds_every_injected_anomaly(parquet_history: Path) -> None:
    result = run("check", "--engine", "local", "--all-violations", "--json", str(parquet_history))
    assert result.returncode == 1, result.stderr
    v = verdict(result)
    assert v["engine"] == "local" and v["valid"] is False
    assert isinstance(v["invalid_keys"], list) and len(v["invalid_keys"]) == 3
    text = run("check", str(parquet_history))
    assert "engine local" in text.stdout


@pytest.mark.spark
@pytest.mark.skipif(shutil.which("java") is None, reason="the Spark engine needs Java")
def test_spark_engine_agrees_with_the_local_engine(parquet_history: Path) -> None:
    local = verdict(run("check", "--engine", "local", "--all-violations", "--json", str(parquet_history)))
    spark = run("check", "--engine", "spark", "--spark-master", "local[2]", "--all-violations", "--json",
                str(parquet_history))
    assert spark.returncode == 1, spark.stderr[-2000:]
    s = verdict(spark)
    assert s["engine"] == "spark"
    assert sorted(map(str, s["invalid_keys"])) == sorted(map(str, local["invalid_keys"]))  # type: ignore[call-overload]
