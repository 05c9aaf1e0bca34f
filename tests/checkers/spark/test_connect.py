"""Spark Connect (``SPARK_REMOTE``, or an ``sc://`` master): without its client packages the check
says what to install, in one line, instead of failing inside PySpark. No server is started here."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from click.testing import CliRunner

from checkers.gen_history import HistoryGenerator
from checkers.spark import engine
from harness.cli.main import cli
from harness.history.parquet import write_parquet


def _client_installed() -> bool:
    try:
        return all(importlib.util.find_spec(m) is not None for m in engine.CONNECT_MODULES)
    except ModuleNotFoundError:
        return False


pytestmark = pytest.mark.skipif(_client_installed(), reason="the Spark Connect client is installed here")


def test_spark_remote_without_the_client_names_what_to_install(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("pyspark")
    path = tmp_path / "h.parquet"
    write_parquet(HistoryGenerator(50, keys=2, seed=1), path)
    monkeypatch.setenv("SPARK_REMOTE", "sc://127.0.0.1:15002")
    monkeypatch.setattr(engine, "_SESSION", None)  # a session another test started is not Spark Connect
    result = CliRunner().invoke(cli, ["check", str(path), "--engine", "spark"])
    assert result.exit_code == 3
    assert "Spark Connect (sc://127.0.0.1:15002) needs grpcio" in result.output
    assert "pip install 'pyspark[connect]'" in result.output


def test_an_sc_master_is_spark_connect(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("pyspark")
    monkeypatch.delenv("SPARK_REMOTE", raising=False)
    monkeypatch.setattr(engine, "_SESSION", None)
    with pytest.raises(ValueError, match=r"Spark Connect \(sc://example:15002\) needs"):
        engine.get_session("sc://example:15002")
