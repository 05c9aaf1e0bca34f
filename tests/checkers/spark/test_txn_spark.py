"""The Spark engine for transactional histories gives the local engine's result: the same verdict, anomaly types,
counts and anomalies (each cycle's transactions and edges, in the same words), the same graph size, and the same
one-line error for a malformed micro-op."""

from __future__ import annotations

from array import array
from pathlib import Path
from typing import Any

import pytest

from checkers.gen_history_plants import PLANT_TYPES
from checkers.gen_history_txn import TxnHistoryGenerator, write_txn_jsonl
from checkers.spark.txn import check_txn_spark
from checkers.txn import MalformedTxn, check_txn
from harness.history.formats import load_history, write_history

pytestmark = pytest.mark.spark

DATA = Path(__file__).parents[1] / "txn" / "data"


def _local(path: Path, workload: str, consistency: list[str]) -> dict[str, Any]:
    """The local engine, as ``fencepost check --model ...`` runs it."""
    lines: array = array("q")
    ops = load_history(path, line_numbers=lines)
    return check_txn(ops, workload, consistency, source=str(path), lines=lines)


def _same(local: dict[str, Any], spark: dict[str, Any]) -> None:
    assert spark.pop("engine") == "spark"
    for result in (local, spark):
        result.pop("seconds")
    if local["workload"] == "rw-register":  # Spark's graph has an edge per pair, the local one chains
        assert spark["graph"]["components"] == local["graph"]["components"]
        spark["graph"] = local["graph"]
    assert spark.keys() == local.keys()
    for key in local:
        assert spark[key] == local[key], key


def test_planted_anomalies_in_edn_are_found_and_explained_as_locally(spark: Any, tmp_path: Path) -> None:
    kinds = PLANT_TYPES["list-append"]
    jsonl, path = tmp_path / "planted.jsonl", tmp_path / "planted.edn"
    write_txn_jsonl(TxnHistoryGenerator("list-append", txns=300, processes=6, seed=7, anomalies=len(kinds),
                                        anomaly_types=tuple(kinds)), jsonl)
    write_history(load_history(jsonl), path)
    local = _local(path, "list-append", ["strict-serializable"])
    assert local["valid"] is False
    assert {"G0", "G1a", "G1c", "G-single", "G2-item", "internal", "incompatible-order"} <= set(local["counts"])
    _same(local, check_txn_spark(str(path), "list-append", ["strict-serializable"], spark=spark))


def test_a_valid_history_in_memory_is_valid_under_a_session_model(spark: Any, tmp_path: Path) -> None:
    path = tmp_path / "valid.jsonl"
    write_txn_jsonl(TxnHistoryGenerator("list-append", txns=400, processes=5, seed=3), path)
    ops = load_history(path, lines=True)
    models = ["serializable", "strong-session-serializable"]
    local = check_txn(ops, "list-append", models, source="valid.jsonl")
    assert local["valid"] is True and local["graph"]["order"] == "process"
    _same(local, check_txn_spark(ops, "list-append", models, spark=spark, source="valid.jsonl"))


def test_the_elle_json_sample(spark: Any) -> None:
    path = DATA / "g-single.json"
    local = _local(path, "list-append", ["strict-serializable"])
    assert local["prohibited"] == ["G-single"]
    _same(local, check_txn_spark(str(path), "list-append", ["strict-serializable"], spark=spark))


@pytest.mark.parametrize("name", ["malformed.jsonl", "malformed.json"])
def test_a_malformed_micro_op_gets_the_local_message_and_line(spark: Any, name: str) -> None:
    path = DATA / name
    with pytest.raises(MalformedTxn) as local:
        _local(path, "list-append", ["strict-serializable"])
    with pytest.raises(MalformedTxn) as remote:
        check_txn_spark(str(path), "list-append", spark=spark)
    assert remote.value.where(str(path)) == local.value.where(str(path))
    assert (remote.value.index, remote.value.line) == (local.value.index, local.value.line)


def test_planted_rw_register_anomalies_are_found_and_explained_as_locally(spark: Any, tmp_path: Path) -> None:
    kinds = PLANT_TYPES["rw-register"]
    path = tmp_path / "planted-rw.jsonl"
    write_txn_jsonl(TxnHistoryGenerator("rw-register", txns=300, processes=6, seed=5, anomalies=len(kinds),
                                        anomaly_types=tuple(kinds)), path)
    local = _local(path, "rw-register", ["strict-serializable"])
    assert {"G0", "G1a", "G1c", "G-single", "G-single-realtime", "G2-item", "lost-update"} <= set(local["counts"])
    _same(local, check_txn_spark(str(path), "rw-register", ["strict-serializable"], spark=spark))


def test_an_unknown_workload_is_refused_in_one_line() -> None:
    with pytest.raises(ValueError, match="not 'bank'"):
        check_txn_spark(str(DATA / "g-single.jsonl"), "bank")
