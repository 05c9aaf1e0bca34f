"""The transactional conformance kit, run against the fake as a plugin runs it against its system, and shown to
catch clients that break the contract."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.protocols import Client, Invocation, Outcome
from harness.testing import FakeSystem
from harness.testing.conformance import TransactionalConformance
from harness.testing.fake import FakeTxnClient
from harness.testing.txn_checks import Contended, shape_problems, visibility_problems


class TestTheFake(TransactionalConformance):
    """What a plugin's tests hold: the kit, subclassed, naming the system and its backend."""

    system = "fake"
    backend = "memory"


class Broken(TransactionalConformance):
    """The kit against a fake whose transactional client misbehaves as ``client_class`` does."""

    system = "fake"
    backend = "memory"
    client_class: type[FakeTxnClient] = FakeTxnClient

    def plugin(self) -> FakeSystem:
        kit = self

        class Misbehaving(FakeSystem):
            def client(self, workload: Any, cluster: Any) -> Client:
                return kit.client_class(self._store, workload.name)

        return Misbehaving()


class LeavesReadsUnfilled(FakeTxnClient):
    async def invoke(self, op: Invocation) -> Outcome:
        outcome = await super().invoke(op)
        if outcome.type != "ok":
            return outcome
        return Outcome("ok", [[f, k, None] if f == "r" else [f, k, v] for f, k, v in outcome.value])


class ReportsAbortsAsOk(FakeTxnClient):
    async def invoke(self, op: Invocation) -> Outcome:
        outcome = await super().invoke(op)
        return Outcome("ok", [list(m) for m in op.value]) if outcome.type == "fail" else outcome


class ReportsCommitsAsFail(FakeTxnClient):
    calls = 0

    async def invoke(self, op: Invocation) -> Outcome:
        outcome = await super().invoke(op)
        ReportsCommitsAsFail.calls += 1
        if outcome.type == "ok" and ReportsCommitsAsFail.calls % 3 == 0 and any(m[0] != "r" for m in op.value):
            return Outcome("fail", op.value, "said to have aborted")
        return outcome


@pytest.mark.parametrize(("client_class", "check", "says"), [
    (LeavesReadsUnfilled, "test_a_transaction_completes_with_its_reads_filled_in", "read"),
    (LeavesReadsUnfilled, "test_reads_see_committed_writes_in_order", "read"),
    (ReportsAbortsAsOk, "test_contended_outcomes_say_truly_what_committed", "reported ok"),
    (ReportsCommitsAsFail, "test_contended_outcomes_say_truly_what_committed", "reported fail"),
])
def test_the_kit_catches_a_client_that_breaks_the_contract(tmp_path: Path, client_class: type[FakeTxnClient],
                                                           check: str, says: str) -> None:
    kit = type("Kit", (Broken,), {"client_class": client_class})()
    with pytest.raises(AssertionError, match=says):
        getattr(kit, check)(tmp_path)


def test_shape_problems_name_each_way_an_ok_can_be_wrong() -> None:
    asked = [["append", 1, 5], ["r", 1, None]]
    assert shape_problems(asked, Outcome("ok", [["append", 1, 5], ["r", 1, [5]]]), "list-append") == []
    assert shape_problems(asked, Outcome("fail"), "list-append") == []
    assert "ok, fail or info" in shape_problems(asked, Outcome("maybe"), "list-append")[0]
    assert "not the 2 micro-op(s)" in shape_problems(asked, Outcome("ok", [["append", 1, 5]]), "list-append")[0]
    assert "another function or key" in shape_problems(asked, Outcome("ok", [["append", 2, 5], ["r", 1, []]]),
                                                       "list-append")[0]
    assert "came back as" in shape_problems(asked, Outcome("ok", [["append", 1, 6], ["r", 1, []]]), "list-append")[0]
    assert "is a list, not 5" in shape_problems(asked, Outcome("ok", [["append", 1, 5], ["r", 1, 5]]),
                                                "list-append")[0]
    assert shape_problems([["r", 1, None]], Outcome("ok", [["r", 1, 5]]), "rw-register") == []


def test_visibility_problems_for_list_append_and_registers() -> None:
    seen = Contended(writes=[(1, 10, "ok"), (1, 11, "fail"), (1, 12, "info"), (2, 20, "ok")],
                     final={1: [10, 11, 10, 99], 2: []})
    problems = visibility_problems(seen, "list-append")
    assert any("holds [10] twice" in p for p in problems)
    assert any("11, appended by a transaction reported fail" in p for p in problems)
    assert any("99, which no transaction appended" in p for p in problems)
    assert any("lacks [20]" in p for p in problems)
    assert visibility_problems(Contended(writes=seen.writes, final={1: [10, 12], 2: [20]}), "list-append") == []
    registers = Contended(writes=[(1, 10, "ok"), (1, 11, "fail"), (2, 20, "ok")], final={1: 11, 2: None})
    problems = visibility_problems(registers, "rw-register")
    assert len(problems) == 2 and "reported fail" in problems[0] and "finally reads nothing" in problems[1]
