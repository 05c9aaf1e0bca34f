"""The mutual-exclusion checker: two acknowledged lock holders that read the same revision overlapped."""

from __future__ import annotations

from typing import Any

from checkers.mutual_exclusion import MutualExclusionChecker
from harness.checker_protocol import CheckContext
from harness.history.op import Op, OpType
from harness.history.records import op_from_record
from tests.checkers.histories import sequential

CTX = CheckContext()


def holders(*adds: tuple[int, int, str, int | None]) -> list[Op]:
    """(process, element, outcome, read revision) per add, one after another; revisions on completions."""
    ops = sequential(*((p, "add", "lock-set", e, outcome, e if outcome == "ok" else None) for p, e, outcome, _ in adds))
    for (_, _, _, revision), done in zip(adds, ops[1::2], strict=True):
        if revision is not None:
            done.extra["read_revision"] = revision
    return ops


def test_each_holder_reading_the_last_write_is_valid() -> None:
    r = MutualExclusionChecker().check(holders((0, 1, "ok", 0), (1, 2, "ok", 5), (2, 3, "ok", 9)), CTX)
    assert r["valid"] is True and r["holders_judged"] == 3


def test_two_acknowledged_holders_reading_one_revision_are_a_violation() -> None:
    r: dict[str, Any] = MutualExclusionChecker().check(
        holders((0, 1, "ok", 0), (1, 2, "ok", 5), (2, 3, "ok", 5), (3, 4, "ok", 9)), CTX)
    assert r["valid"] is False and r["violations"] == 1
    assert [h["element"] for h in r["examples"][0]["holders"]] == [2, 3]
    assert "Mutual exclusion violated" in r["explanation"]


def test_a_holder_whose_write_failed_or_is_unknown_proves_nothing() -> None:
    # The next holder rightly reads the revision the failed holder read.
    ops = holders((0, 1, "fail", 5), (1, 2, "info", 5), (2, 3, "ok", 5))
    assert MutualExclusionChecker().check(ops, CTX)["valid"] is True


def test_a_client_without_revisions_leaves_nothing_to_judge() -> None:
    r = MutualExclusionChecker().check(holders((0, 1, "ok", None), (1, 2, "ok", None)), CTX)
    assert r["valid"] is True and r["holders_judged"] == 0 and "nothing to judge" in r["explanation"]


def test_completions_keep_their_revisions_through_the_jsonl_history() -> None:
    ops = holders((0, 1, "ok", 7), (1, 2, "ok", 7))
    read_back = [op_from_record(op.to_dict(), i) for i, op in enumerate(ops)]
    assert read_back[1].extra == {"read_revision": 7}
    assert MutualExclusionChecker().check(read_back, CTX)["valid"] is False
    assert all(op.type in (OpType.INVOKE, OpType.OK) for op in read_back)
