"""list-append: each anomaly class on a tiny hand-written history, found and classified; the verdict follows the
models checked; explanations name the transactions, their processes, times and lines."""

from __future__ import annotations

from typing import Any

import pytest

from checkers.txn import check_txn
from tests.checkers.txn.core_history import overlapping, sequential, txn

X, Y, Z, W = 1, 2, 3, 4
SER, SI, STRICT, RC, RU = "serializable", "snapshot-isolation", "strict-serializable", "read-committed", \
    "read-uncommitted"


def a(k: int, v: Any) -> list[Any]:
    return ["append", k, v]


def r(k: int, v: Any) -> list[Any]:
    return ["r", k, v]


CASES: dict[str, tuple[Any, set[str], set[int]]] = {
    "G0": (lambda: overlapping(txn(0, [a(X, 1), a(Y, 1)]), txn(1, [a(X, 2), a(Y, 2)]),
                               txn(2, [r(X, [1, 2]), r(Y, [2, 1])])), {"G0"}, {0, 1}),
    "G1a": (lambda: overlapping(txn(0, [a(X, 1)], "fail"), txn(1, [r(X, [1])])), {"G1a"}, {0, 1}),
    "G1b": (lambda: overlapping(txn(0, [a(X, 1), a(X, 2)]), txn(1, [r(X, [1])]), txn(2, [r(X, [1, 2])])),
            {"G1b"}, {0, 1}),
    "G1c": (lambda: overlapping(txn(0, [a(X, 1), r(Y, [1])]), txn(1, [a(Y, 1), r(X, [1])])), {"G1c"}, {0, 1}),
    "G-single": (lambda: overlapping(txn(0, [a(X, 1), a(Y, 1)]), txn(1, [r(X, []), r(Y, [1])]),
                                     txn(2, [r(X, [1])])), {"G-single"}, {0, 1}),
    "G-nonadjacent": (lambda: overlapping(txn(0, [r(X, []), r(W, [1])]), txn(1, [a(X, 1), a(Y, 1)]),
                                          txn(2, [r(Y, [1]), r(Z, [])]), txn(3, [a(Z, 1), a(W, 1)]),
                                          txn(4, [r(X, [1]), r(Z, [1])])), {"G-nonadjacent"}, {0, 1, 2, 3}),
    "G2-item": (lambda: overlapping(txn(0, [r(X, []), r(Y, []), a(X, 1)]), txn(1, [r(X, []), r(Y, []), a(Y, 1)]),
                                    txn(2, [r(X, [1]), r(Y, [1])])), {"G2-item"}, {0, 1}),
    "lost-update": (lambda: overlapping(txn(0, [r(X, []), a(X, 1)]), txn(1, [r(X, []), a(X, 2)]),
                                        txn(2, [r(X, [1, 2])])), {"lost-update", "G-single"}, {0, 1}),
    "internal": (lambda: overlapping(txn(0, [a(X, 1), r(X, [])])), {"internal"}, {0}),
    "dirty-update": (lambda: overlapping(txn(0, [a(X, 1)], "fail"), txn(1, [a(X, 2)]), txn(2, [r(X, [1, 2])])),
                     {"dirty-update", "G1a"}, {0, 1}),
    "duplicate-elements": (lambda: overlapping(txn(0, [a(X, 1)]), txn(1, [r(X, [1, 1])])),
                           {"duplicate-elements"}, {1}),
    "incompatible-order": (lambda: overlapping(txn(0, [a(X, 1)]), txn(1, [a(X, 2)]), txn(2, [r(X, [1, 2])]),
                                               txn(3, [r(X, [2, 1])])), {"incompatible-order"}, {2, 3}),
    "garbage-read": (lambda: overlapping(txn(0, [r(X, [7])])), {"garbage-read"}, {0}),
    "future-read": (lambda: overlapping(txn(0, [r(X, [1]), a(X, 1)])), {"future-read"}, {0}),
}


def _ids(entry: dict[str, Any]) -> set[int]:
    return {t["id"] for t in entry["txns"]}


@pytest.mark.parametrize("kind", sorted(CASES))
def test_each_anomaly_is_found_and_classified(kind: str) -> None:
    make, types, involved = CASES[kind]
    result = check_txn(make(), "list-append", [STRICT])
    assert set(result["anomaly_types"]) == types
    assert result["valid"] is False
    assert kind in result["prohibited"]
    assert _ids(result["anomalies"][kind][0]) == involved
    assert result["counts"][kind] == 1


@pytest.mark.parametrize(("make", "model"), [
    (lambda: overlapping(txn(0, [a(X, 1), a(Y, 1)]), txn(1, [a(X, 2), a(Y, 2)]),
                         txn(2, [r(X, [1, 2]), r(Y, [1, 2])])), STRICT),
    (lambda: overlapping(txn(0, [r(X, []), r(Y, []), a(X, 1)]), txn(1, [r(X, [1]), r(Y, []), a(Y, 1)]),
                         txn(2, [r(X, [1]), r(Y, [1])])), SER),
    (lambda: sequential(txn(0, [a(X, 1)]), txn(1, [r(X, [1])]), txn(2, [r(X, [1]), a(X, 2)]),
                        txn(3, [r(X, [1, 2])])), STRICT),
])
def test_clean_twins_are_valid(make: Any, model: str) -> None:
    result = check_txn(make(), "list-append", [model])
    assert result["valid"] is True and result["anomaly_types"] == [] and result["not"] == []


def test_g2_item_alone_is_valid_under_snapshot_isolation_and_invalid_under_serializable() -> None:
    ops = CASES["G2-item"][0]()
    si = check_txn(ops, "list-append", [SI])
    assert si["valid"] is True and si["also_seen"] == ["G2-item"] and si["prohibited"] == []
    ser = check_txn(ops, "list-append", [SER])
    assert ser["valid"] is False and ser["prohibited"] == ["G2-item"]
    both = check_txn(ops, "list-append", [SI, SER])
    assert both["valid"] is False
    assert "snapshot-isolation" not in ser["not"] + ser["also_not"] and ser["not"] == ["repeatable-read"]


def test_weaker_models_let_weaker_anomalies_pass() -> None:
    assert check_txn(CASES["G1a"][0](), "list-append", [RU])["valid"] is True
    assert check_txn(CASES["G1a"][0](), "list-append", [RC])["valid"] is False
    assert check_txn(CASES["G-single"][0](), "list-append", [RC])["valid"] is True
    assert check_txn(CASES["G-nonadjacent"][0](), "list-append", [SI])["valid"] is False


def test_an_info_transactions_write_may_be_seen_but_a_failed_ones_may_not() -> None:
    seen_info = overlapping(txn(0, [a(X, 1)], "info"), txn(1, [r(X, [1])]))
    result = check_txn(seen_info, "list-append", [STRICT])
    assert result["valid"] is True and result["anomaly_types"] == [] and result["info"] == 1
    seen_fail = overlapping(txn(0, [a(X, 1)], "fail"), txn(1, [r(X, [1])]))
    assert check_txn(seen_fail, "list-append", [STRICT])["prohibited"] == ["G1a"]
    never = overlapping(txn(0, [a(X, 1)], "never"), txn(1, [r(X, [1])]))
    assert check_txn(never, "list-append", [STRICT])["valid"] is True


def _stale() -> Any:
    return sequential(txn(0, [a(X, 1)]), txn(1, [r(X, [])]), txn(2, [r(X, [1])]))


def test_a_stale_read_is_a_realtime_anomaly_only_under_strict_models() -> None:
    assert check_txn(_stale(), "list-append", [SER])["valid"] is True
    strict = check_txn(_stale(), "list-append", [STRICT])
    assert strict["anomaly_types"] == ["G-single-realtime"] and strict["valid"] is False
    assert check_txn(_stale(), "list-append", ["strong-session-serializable"])["valid"] is True  # other processes


def test_a_process_anomaly_under_session_models() -> None:
    ops = sequential(txn(0, [a(X, 1)]), txn(0, [r(X, [])]), txn(1, [r(X, [1])]))
    session = check_txn(ops, "list-append", ["strong-session-serializable"])
    assert session["anomaly_types"] == ["G-single-process"] and session["valid"] is False
    assert check_txn(ops, "list-append", [SER])["valid"] is True
    strict = check_txn(ops, "list-append", [STRICT])
    assert strict["anomaly_types"] == ["G-single-realtime"]  # real time includes process order (as in Elle)


def test_the_explanation_names_edges_processes_times_and_lines() -> None:
    result = check_txn(CASES["G-single"][0](), "list-append", [SER], source="h.jsonl")
    entry = result["anomalies"]["G-single"][0]
    assert "T1 read key 1 as []; T0 appended 1, which comes next in key 1's version order; so T1 rw→ T0" \
        in entry["explanation"]
    assert any(s.startswith("T0 appended 1 to key 2; T1 read key 2 as [1]; so T0 wr→ T1") for s in entry["explanation"])
    t0 = next(t for t in entry["txns"] if t["id"] == 0)
    assert t0["process"] == 0 and t0["type"] == "ok" and t0["lines"] == [1, 4]
    assert t0["invoke_time"] == 1_000_000 and t0["complete_time"] == 100_000_000
    assert t0["label"] == "T0 (process 0, ok, invoked 0.001 s, completed 0.100 s; h.jsonl:1, 4)"
    assert [step["edge"]["type"] for step in entry["cycle"]] in (["wr", "rw"], ["rw", "wr"])
    assert entry["cycle"][0]["edge"]["to"] == entry["cycle"][1]["txn"]["id"]


def test_a_path_through_realtime_barriers_is_one_realtime_edge() -> None:
    # Many transactions between the writer and the stale reader: their completions are barriers on the way.
    ops = sequential(txn(0, [a(X, 1)]), *(txn(9, [a(Y, i)]) for i in range(1, 6)), txn(1, [r(X, [])]),
                     txn(2, [r(X, [1])]))
    entry = check_txn(ops, "list-append", [STRICT])["anomalies"]["G-single-realtime"][0]
    kinds = [step["edge"]["type"] for step in entry["cycle"]]
    assert sorted(kinds) == ["realtime", "rw"]
    sentence = next(s for s in entry["explanation"] if "realtime" in s)
    assert sentence == "T0 completed at 0.005 s before T6 was invoked at 0.061 s; so T0 realtime→ T6"


def test_the_shortest_cycle_of_a_class_is_reported() -> None:
    # T0 <-> T1 (2 edges) and T1 -> T2 -> T0 -> T1 (3 edges) share a component; the 2-cycle is reported.
    ops = overlapping(txn(0, [a(X, 1), a(Y, 2), a(W, 2)]), txn(1, [a(X, 2), a(Y, 1), a(Z, 1)]),
                      txn(2, [a(Z, 2), a(W, 1)]), txn(3, [r(X, [1, 2]), r(Y, [1, 2]), r(Z, [1, 2]), r(W, [1, 2])]))
    entry = check_txn(ops, "list-append", [SER])["anomalies"]["G0"][0]
    assert len(entry["cycle"]) == 2 and _ids(entry) == {0, 1}


def test_the_result_is_json_ready_and_counts_the_outcomes() -> None:
    import json

    result = check_txn(CASES["dirty-update"][0](), "list-append")
    assert json.loads(json.dumps(result)) == result
    assert (result["txns"], result["ok"], result["fail"], result["info"]) == (3, 2, 1, 0)
    assert result["consistency"] == ["strict-serializable"]


def test_no_committed_transaction_is_unknown() -> None:
    result = check_txn(overlapping(txn(0, [a(X, 1)], "fail")), "list-append")
    assert result["valid"] == "unknown" and result["unknown_reasons"]
    assert check_txn([], "list-append")["valid"] == "unknown"
