from __future__ import annotations

from checkers.bank import BankChecker
from checkers.log_order import LogOrderChecker
from checkers.set_full import SetFullChecker
from harness.checker_protocol import CheckContext
from tests.checkers.histories import sequential as history

CTX = CheckContext()


def test_set_all_present_is_valid_and_recovered_counts_info() -> None:
    h = history((0, "add", "s", 1, "ok", 1), (1, "add", "s", 2, "info", None), (2, "add", "s", 3, "fail", None),
                (3, "read", "s", None, "ok", [1, 2]))
    r = SetFullChecker().check(h, CTX)
    assert r["valid"] is True
    assert r["counts"]["ok"] == 1 and r["counts"]["recovered"] == 1


def test_set_lost_and_unexpected_are_invalid() -> None:
    lost = history((0, "add", "s", 1, "ok", 1), (0, "add", "s", 2, "ok", 2), (3, "read", "s", None, "ok", [2]))
    r = SetFullChecker().check(lost, CTX)
    assert r["valid"] is False and r["counts"]["lost"] == 1 and r["examples"]["lost"][0]["element"] == 1
    ghost = history((0, "add", "s", 1, "ok", 1), (3, "read", "s", None, "ok", [1, 99]))
    r = SetFullChecker().check(ghost, CTX)
    assert r["valid"] is False and r["counts"]["unexpected"] == 1
    failed_but_present = history((0, "add", "s", 5, "fail", None), (3, "read", "s", None, "ok", [5]))
    assert SetFullChecker().check(failed_but_present, CTX)["valid"] is False


def test_log_in_order_is_valid() -> None:
    h = history((0, "append", "l", "a", "ok", {"element": "a", "position": 0}),
                (1, "read-log", "l", None, "ok", ["a"]),
                (0, "append", "l", "b", "ok", {"element": "b", "position": 1}),
                (2, "read-log", "l", None, "ok", ["a", "b"]))
    assert LogOrderChecker().check(h, CTX)["valid"] is True


def test_log_lost_duplicated_misplaced_and_divergent() -> None:
    h = history((0, "append", "l", "a", "ok", {"element": "a", "position": 0}),
                (0, "append", "l", "b", "ok", {"element": "b", "position": 1}),
                (0, "append", "l", "c", "ok", {"element": "c", "position": 2}),
                (1, "read-log", "l", None, "ok", ["a", "x"]),
                (2, "read-log", "l", None, "ok", ["a", "c", "c"]))
    r = LogOrderChecker().check(h, CTX)
    assert r["valid"] is False
    assert r["counts"] == {"lost": 1, "duplicated": 1, "misplaced": 1, "divergent-reads": 1}


def test_bank_conserved_and_broken() -> None:
    ok = history((0, "read", "bank", None, "ok", {"a": 10, "b": 10}), (1, "transfer", "bank", {}, "ok", {}),
                 (0, "read", "bank", None, "ok", {"a": 7, "b": 13}))
    assert BankChecker(total=20).check(ok, CTX)["valid"] is True
    bad = history((0, "read", "bank", None, "ok", {"a": 10, "b": 10}),
                  (0, "read", "bank", None, "ok", {"a": 7, "b": 10}),
                  (0, "read", "bank", None, "ok", {"a": -1, "b": 21}))
    r = BankChecker(total=20).check(bad, CTX)
    assert r["valid"] is False and r["bad_reads"] == 2
