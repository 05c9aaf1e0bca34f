"""rw-register: version orders only from what the history proves; each anomaly found and classified."""

from __future__ import annotations

from typing import Any

import pytest

from checkers.txn import check_txn
from tests.checkers.txn.core_history import overlapping, sequential, txn

X, Y = 1, 2
SER, SI, STRICT = "serializable", "snapshot-isolation", "strict-serializable"


def w(k: int, v: Any) -> list[Any]:
    return ["w", k, v]


def r(k: int, v: Any) -> list[Any]:
    return ["r", k, v]


CASES: dict[str, tuple[Any, set[str], set[int]]] = {
    "G0": (lambda: overlapping(txn(0, [w(X, 1), r(Y, 2), w(Y, 1)]), txn(1, [r(X, 1), w(X, 2), w(Y, 2)])),
           {"G0"}, {0, 1}),
    "G1a": (lambda: overlapping(txn(0, [w(X, 1)], "fail"), txn(1, [r(X, 1)])), {"G1a"}, {0, 1}),
    "G1b": (lambda: overlapping(txn(0, [w(X, 1), w(X, 2)]), txn(1, [r(X, 1)])), {"G1b"}, {0, 1}),
    "G1c": (lambda: overlapping(txn(0, [w(X, 1), r(Y, 1)]), txn(1, [w(Y, 1), r(X, 1)])), {"G1c"}, {0, 1}),
    "G-single": (lambda: overlapping(txn(0, [w(X, 1), w(Y, 1)]), txn(1, [r(X, None), r(Y, 1)])),
                 {"G-single"}, {0, 1}),
    "G2-item": (lambda: overlapping(txn(0, [r(X, None), r(Y, None), w(X, 1)]),
                                    txn(1, [r(X, None), r(Y, None), w(Y, 1)])), {"G2-item"}, {0, 1}),
    "lost-update": (lambda: overlapping(txn(0, [r(X, None), w(X, 1)]), txn(1, [r(X, None), w(X, 2)])),
                    {"lost-update", "G2-item"}, {0, 1}),
    "internal": (lambda: overlapping(txn(0, [w(X, 1), r(X, 2)]), txn(1, [w(X, 2)])), {"internal"}, {0}),
    "garbage-read": (lambda: overlapping(txn(0, [r(X, 9)])), {"garbage-read"}, {0}),
    "future-read": (lambda: overlapping(txn(0, [r(X, 1), w(X, 1)])), {"future-read"}, {0}),
    "dirty-update": (lambda: overlapping(txn(0, [w(X, 1)], "fail"), txn(1, [r(X, 1), w(X, 2)])),
                     {"dirty-update", "G1a"}, {0, 1}),
}


@pytest.mark.parametrize("kind", sorted(CASES))
def test_each_anomaly_is_found_and_classified(kind: str) -> None:
    make, types, involved = CASES[kind]
    result = check_txn(make(), "rw-register", [SER])
    assert set(result["anomaly_types"]) == types
    assert result["valid"] is False and kind in result["prohibited"]
    assert {t["id"] for t in result["anomalies"][kind][0]["txns"]} == involved


def test_g2_item_alone_is_valid_under_snapshot_isolation_only() -> None:
    ops = CASES["G2-item"][0]()
    assert check_txn(ops, "rw-register", [SI])["valid"] is True
    assert check_txn(ops, "rw-register", [SER])["valid"] is False


def test_nothing_is_guessed_two_blind_writes_are_unordered() -> None:
    # Two writes and reads of each: without a read-then-write, 1 and 2 have no order, so no cycle.
    ops = overlapping(txn(0, [w(X, 1)]), txn(1, [w(X, 2)]), txn(2, [r(X, 1)]), txn(3, [r(X, 2)]))
    result = check_txn(ops, "rw-register", [STRICT])
    assert result["valid"] is True and result["anomaly_types"] == []


def test_real_time_orders_versions_only_under_strict_models() -> None:
    # T0 wrote 1, then T1 wrote 2 after T0 committed, then T2 read 1: stale under real time, fine otherwise.
    ops = sequential(txn(0, [w(X, 1)]), txn(1, [w(X, 2)]), txn(2, [r(X, 1)]))
    assert check_txn(ops, "rw-register", [SER])["valid"] is True
    strict = check_txn(ops, "rw-register", [STRICT])
    assert strict["anomaly_types"] == ["G-single-realtime"] and strict["valid"] is False
    sentence = next(s for s in strict["anomalies"]["G-single-realtime"][0]["explanation"] if "rw→" in s)
    assert sentence.startswith("T2 read key 1 = 1, written by T0; T0 completed at")
    assert sentence.endswith("so in real-time order T1's 2 follows 1; so T2 rw→ T1")


def test_process_order_orders_versions_under_session_models() -> None:
    ops = sequential(txn(0, [w(X, 1)]), txn(0, [w(X, 2)]), txn(0, [r(X, 1)]))
    assert check_txn(ops, "rw-register", [SER])["valid"] is True
    session = check_txn(ops, "rw-register", ["strong-session-serializable"])
    assert session["anomaly_types"] == ["G-single-process"]


def test_a_reader_of_nil_precedes_every_writer_but_itself() -> None:
    # T0 read nil and wrote 1: no self-edge; with T1's write, T0 rw-> T1 only.
    ops = overlapping(txn(0, [r(X, None), w(X, 1)]), txn(1, [w(X, 2)]), txn(2, [r(X, 1)]))
    result = check_txn(ops, "rw-register", [STRICT])
    assert result["valid"] is True


def test_an_info_write_seen_is_no_aborted_read() -> None:
    ops = overlapping(txn(0, [w(X, 1)], "info"), txn(1, [r(X, 1)]))
    assert check_txn(ops, "rw-register", [STRICT])["valid"] is True
