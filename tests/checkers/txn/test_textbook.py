"""The textbook anomalies, each a tiny hand-written history with its clean twin (see textbook.py), in list-append
and rw-register form. The oracle's verdicts on them are tested in test_oracle_self.py.

For each, check_txn finds the anomaly, classifies it, is invalid under the models that prohibit it and valid
under those that allow it, and explains it: the transactions it names (with their processes, times and lines) are
the ones involved, and each edge of a cycle is a sentence that names both transactions and the edge's type. Each
clean twin is valid, with no anomaly at all.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from checkers.txn import check_txn
from tests.checkers.txn.oracle import MODELS
from tests.checkers.txn.oracle_histories import build, event_indexes
from tests.checkers.txn.textbook import CASES, Case

ANOMALIES = [c for c in CASES if c.anomaly is not None]
CLEAN = [c for c in CASES if c.anomaly is None]


def _id(case: Case) -> str:
    return f"{case.workload}:{case.name}"


def _named(case: Case, entry: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """The anomaly's transactions, by their position in the case (matched on invocation index)."""
    by_invoke = {txn["invoke_index"]: txn for txn in entry["txns"]}
    indexes = event_indexes(case.txns)
    missing = [n for n in case.involved if indexes[n][0] not in by_invoke]
    assert not missing, f"transactions {missing} of the case are not named: {entry}"
    return {n: by_invoke[indexes[n][0]] for n in case.involved}


@pytest.mark.parametrize("case", ANOMALIES, ids=_id)
def test_the_checker_finds_and_classifies_each_anomaly(case: Case) -> None:
    ops = build(case.txns)
    result = check_txn(ops, case.workload, [case.invalid[0]])
    assert case.anomaly in result["anomaly_types"], result["anomaly_types"]
    assert case.anomaly in result["prohibited"]
    assert result["valid"] is False
    for model in case.invalid:
        assert check_txn(ops, case.workload, [model])["valid"] is False, model
    for model in case.valid:
        allowed = check_txn(ops, case.workload, [model])
        assert allowed["valid"] is True and allowed["prohibited"] == [], (model, allowed["prohibited"])


@pytest.mark.parametrize("case", CLEAN, ids=_id)
def test_each_clean_twin_is_valid_with_no_anomaly(case: Case) -> None:
    everything = sorted({*case.valid, *MODELS})
    result = check_txn(build(case.txns), case.workload, everything)
    assert result["valid"] is True
    assert result["anomaly_types"] == []
    assert result["not"] == []


@pytest.mark.parametrize("case", ANOMALIES, ids=_id)
def test_the_explanation_names_the_transactions_their_processes_and_the_edges(case: Case) -> None:
    ops = build(case.txns, lines=True)
    result = check_txn(ops, case.workload, [case.invalid[0]], source="textbook.jsonl")
    entries = result["anomalies"][case.anomaly]
    assert entries, result
    entry = entries[0]
    assert entry["type"] == case.anomaly
    assert isinstance(entry["summary"], str) and entry["summary"]
    indexes = event_indexes(case.txns)
    named = _named(case, entry)
    for n, txn in named.items():
        assert txn["process"] == case.txns[n].process
        assert txn["type"] == case.txns[n].outcome
        inv, comp = indexes[n]
        assert txn["invoke_index"] == inv
        assert txn["invoke_time"] == ops[inv].time
        if case.txns[n].outcome != "info":
            assert txn["complete_index"] == comp and comp is not None
            assert txn["complete_time"] == ops[comp].time
            assert txn["lines"] == [inv + 1, comp + 1]
        assert txn["ops"], txn
    if case.edges:
        cycle = entry["cycle"]
        assert len(cycle) >= 2
        types = [step["edge"]["type"] for step in cycle]
        for edge_type in case.edges:
            assert edge_type in types, types
        assert {step["txn"]["id"] for step in cycle} >= {txn["id"] for txn in named.values()}
        for step, nxt in zip(cycle, [*cycle[1:], cycle[0]], strict=True):
            edge = step["edge"]
            assert edge["to"] == nxt["txn"]["id"]
            sentence = edge["explanation"]
            names = set(re.findall(r"\bT(\d+)\b", sentence))
            assert {str(step["txn"]["id"]), str(edge["to"])} <= names, sentence
            assert edge["type"] in sentence, sentence
        assert entry["explanation"], entry
    else:
        text = " ".join(entry["explanation"])
        for txn in named.values():
            assert re.search(rf"\bT{txn['id']}\b", text), text


def test_g2_item_alone_is_valid_under_snapshot_isolation_and_invalid_under_serializable() -> None:
    for case in (c for c in CASES if c.name == "G2-item"):
        ops = build(case.txns)
        serializable = check_txn(ops, case.workload, ["serializable"])
        assert serializable["valid"] is False
        assert serializable["prohibited"] == ["G2-item"], serializable["prohibited"]
        snapshot = check_txn(ops, case.workload, ["snapshot-isolation"])
        assert snapshot["valid"] is True
        assert snapshot["prohibited"] == []
        assert "G2-item" in snapshot["also_seen"]


def test_an_aborted_write_seen_is_g1a_and_an_info_write_seen_is_not() -> None:
    for workload in ("list-append", "rw-register"):
        aborted = next(c for c in CASES if c.workload == workload and c.name == "G1a")
        info = next(c for c in CASES if c.workload == workload and c.name == "G1a info is not aborted")
        assert "G1a" in check_txn(build(aborted.txns), workload)["prohibited"]
        result = check_txn(build(info.txns), workload)
        assert result["valid"] is True and "G1a" not in result["anomaly_types"]


def test_a_stale_read_is_only_a_real_time_anomaly() -> None:
    for case in (c for c in CASES if c.name == "G-single-realtime"):
        ops = build(case.txns)
        strict = check_txn(ops, case.workload, ["strict-serializable"])
        assert strict["valid"] is False and strict["prohibited"] == ["G-single-realtime"], strict["prohibited"]
        assert check_txn(ops, case.workload, ["serializable"])["valid"] is True
