"""The generator's honesty: its clean histories are valid, and check_txn finds each planted class as itself.

Also the formats' honesty: the same history in each input format gets the same verdict and anomalies.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from checkers.gen_history_plants import PLANT_TYPES
from checkers.gen_history_txn import TxnHistoryGenerator
from checkers.txn import MalformedTxn, check_txn
from harness.history.formats import load_history

DATA = Path(__file__).parent / "data"
COMPANIONS = {"list-append": {"lost-update": {"G-single"}, "dirty-update": {"G1a"}},
              "rw-register": {"lost-update": {"G2-item"}, "dirty-update": {"G1a"}}}
"""What a plant's class brings with it, by workload (see checkers.gen_history_plants): a lost update's two
writes are ordered in list-append (the longest read), so its cycle is G-single; in rw-register nothing orders
them, and the history proves only the two rw edges, a G2-item."""
CASES = [(w, kind) for w in ("list-append", "rw-register") for kind in PLANT_TYPES[w]]


def _needs(workload: str) -> None:
    if workload == "rw-register" and importlib.util.find_spec("checkers.txn.rw_register") is None:
        pytest.skip("the rw-register inference is not there yet")


@pytest.mark.parametrize("workload", ["list-append", "rw-register"])
def test_a_generated_history_without_plants_is_strict_serializable(workload: str) -> None:
    _needs(workload)
    ops = list(TxnHistoryGenerator(workload, txns=1500, processes=12, seed=8))
    result = check_txn(ops, workload, ["strict-serializable"])
    assert result["valid"] is True and result["anomaly_types"] == [] and result["fail"] > 0 and result["info"] > 0


@pytest.mark.parametrize(("workload", "kind"), CASES)
def test_each_planted_class_is_found_as_itself(workload: str, kind: str) -> None:
    _needs(workload)
    gen = TxnHistoryGenerator(workload, txns=300, processes=6, seed=5, anomalies=2, anomaly_types=(kind,))
    result = check_txn(list(gen), workload, ["strict-serializable"])
    assert set(result["anomaly_types"]) == {kind} | COMPANIONS[workload].get(kind, set())
    assert result["counts"][kind] == 2 and result["valid"] is not True
    planted = {i for p in gen.planted for i in p.indices}
    for entry in result["anomalies"][kind]:
        involved = {t["invoke_index"] for t in entry["txns"]} | {t["complete_index"] for t in entry["txns"]}
        assert involved <= planted  # the anomaly is the plant's, not some other transactions'


def _verdict(path: Path) -> dict[str, Any]:
    """What a format must not change: the verdict, the types, and each anomaly's transactions (not lines)."""
    result = check_txn(load_history(path, lines=True), "list-append", ["strict-serializable"], source=str(path))
    txns = {kind: [[(t["id"], t["process"], t["type"], t["ops"]) for t in entry["txns"]] for entry in entries]
            for kind, entries in result["anomalies"].items()}
    return {k: result[k] for k in ("valid", "anomaly_types", "prohibited", "txns", "ok", "fail", "info")} | {
        "anomalies": txns}


def test_every_format_gives_the_same_verdict_and_anomalies() -> None:
    native = _verdict(DATA / "g-single.jsonl")
    assert native["valid"] is False and native["anomaly_types"] == ["G-single"]
    assert _verdict(DATA / "g-single.edn") == native
    assert _verdict(DATA / "g-single.json") == native


@pytest.mark.parametrize("name", ["malformed.jsonl", "malformed.edn", "malformed.json"])
def test_a_malformed_micro_op_names_its_file_and_line(name: str) -> None:
    path = DATA / name
    with pytest.raises(MalformedTxn) as err:
        check_txn(load_history(path, lines=True), "list-append", source=str(path))
    assert err.value.line in (3, 4)  # the invocation's line or its completion's, both bad
    assert err.value.where(str(path)).startswith(f"{path}:{err.value.line}: ")
