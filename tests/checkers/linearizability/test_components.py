"""Splitting a partition's search by independent component (by key) never changes a verdict: hypothesis
against brute-force oracles that know nothing of keys being independent, with and without the split."""

from __future__ import annotations

import dataclasses
from itertools import permutations
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from checkers.linearizability.checker import PartitionCheck, check_calls
from checkers.linearizability.components import SplitSearch, components
from checkers.models import make_model
from checkers.models.base import Partition
from harness.history.op import Call, Op, OpType
from tests.checkers.linearizability.histories import calls_of, kv_ops, kv_oracle, register_ops
from tests.checkers.linearizability.test_kv_guided import corrupt_get


def keyed_register_oracle(calls: list[Call], *, cas_fail_meaningful: bool = False) -> bool:
    """Brute force over the whole history at once: every order of the definite calls and of each
    subset of the info calls, each key a register starting absent."""
    definite = [c for c in calls if c.outcome is OpType.OK
                or (cas_fail_meaningful and c.outcome is OpType.FAIL and c.f == "cas")]
    infos = [c for c in calls if c.outcome is OpType.INFO and c.f != "read"]

    def ret(c: Call) -> float:
        return float("inf") if c.outcome is OpType.INFO or c.complete is None else c.complete.index

    for mask in range(1 << len(infos)):
        chosen = definite + [c for k, c in enumerate(infos) if mask >> k & 1]
        for order in permutations(chosen):
            if any(ret(order[b]) < order[a].invoke.index
                   for a in range(len(order)) for b in range(a + 1, len(order))):
                continue
            regs: dict[Any, Any] = {}
            for c in order:
                value = regs.get(c.key)
                if c.f == "read":
                    if c.output != value:
                        break
                elif c.f == "write":
                    regs[c.key] = c.input
                else:
                    old, new = c.input
                    if c.outcome is OpType.FAIL:
                        if value == old:
                            break
                    elif value == old:
                        regs[c.key] = new
                    elif c.outcome is OpType.OK:
                        break
            else:
                return True
    return False


@st.composite
def keyed_register_ops(draw: Any, *, keys: int = 2, max_ops: int = 3, cas: bool = False) -> list[Op]:
    """Independent register histories on ``keys`` keys, their events interleaved at random."""
    streams = [draw(register_ops(max_ops=max_ops, procs=2, values=2, cas=cas)) for _ in range(keys)]
    for k, ops in enumerate(streams):
        streams[k] = [dataclasses.replace(op, key=k, process=op.process * keys + k if isinstance(op.process, int)
                                          else op.process) for op in ops]
    merged: list[Op] = []
    heads = [0] * keys
    while any(heads[k] < len(streams[k]) for k in range(keys)):
        k = draw(st.sampled_from([k for k in range(keys) if heads[k] < len(streams[k])]))
        merged.append(streams[k][heads[k]])
        heads[k] += 1
    return [dataclasses.replace(op, index=i, time=i) for i, op in enumerate(merged)]


def corrupt_read(ops: list[Op], pick: int, value: Any) -> list[Op]:
    """Change one ok read's result."""
    targets = [k for k, op in enumerate(ops) if op.type is OpType.OK and op.f == "read"]
    if not targets:
        return ops
    out = list(ops)
    k = targets[pick % len(targets)]
    out[k] = dataclasses.replace(ops[k], value=value)
    return out


def one_partition(calls: list[Call], model: str, split: bool) -> bool | str:
    return check_calls(calls, make_model(model), partition=False, split=split).valid


@settings(max_examples=300, deadline=None)
@given(kv_ops(max_ops=7, procs=3, keys=3), st.integers(0, 50), st.sampled_from(["", "a", "ab", "ba", "c"]),
       st.booleans())
def test_split_kv_agrees_with_brute_force(ops: list[Op], pick: int, value: str, corrupt: bool) -> None:
    calls = calls_of(corrupt_get(ops, pick, value) if corrupt else ops)
    want = kv_oracle(calls)
    assert one_partition(calls, "kv", split=True) is want
    assert one_partition(calls, "kv", split=False) is want


@settings(max_examples=300, deadline=None)
@given(keyed_register_ops(keys=2, max_ops=3, cas=True), st.integers(0, 50), st.sampled_from([None, 0, 1]))
def test_split_cas_register_and_etcd_agree_with_brute_force(ops: list[Op], pick: int, value: Any) -> None:
    calls = calls_of(corrupt_read(ops, pick, value))
    assert one_partition(calls, "cas-register", split=True) is keyed_register_oracle(calls)
    assert one_partition(calls, "etcd", split=True) is keyed_register_oracle(calls, cas_fail_meaningful=True)


@settings(max_examples=200, deadline=None)
@given(keyed_register_ops(keys=3, max_ops=2), st.integers(0, 50), st.sampled_from([None, 0, 1]))
def test_split_register_agrees_with_brute_force(ops: list[Op], pick: int, value: Any) -> None:
    calls = calls_of(corrupt_read(ops, pick, value))
    want = keyed_register_oracle(calls)
    assert one_partition(calls, "register", split=True) is want
    assert one_partition(calls, "register", split=False) is want


def test_components_group_by_key_in_order_of_appearance() -> None:
    ops = [Op(0, 0, 0, OpType.INVOKE, "write", "b", 1), Op(1, 1, 1, OpType.INVOKE, "write", "a", 2),
           Op(2, 2, 0, OpType.OK, "write", "b", 1), Op(3, 3, 1, OpType.OK, "write", "a", 2),
           Op(4, 4, 0, OpType.INVOKE, "read", "b", None), Op(5, 5, 0, OpType.OK, "read", "b", 2)]
    check = PartitionCheck(Partition(None, make_model("register"), calls_of(ops)))
    assert [[check.entries[i].call.key for i in g] for g in check.groups] == [["b", "b"], ["a"]]
    assert isinstance(check.search, SplitSearch) and check.verdict.method == "split search"
    assert check.advance() is False
    assert check.search.failed == 0
    check.explain()
    cex = check.verdict.counterexample
    assert cex is not None and all("['b']" in op.description for op in cex.ops)


def test_one_key_is_not_split() -> None:
    ops = [Op(0, 0, 0, OpType.INVOKE, "write", "k", 1), Op(1, 1, 0, OpType.OK, "write", "k", 1)]
    check = PartitionCheck(Partition(None, make_model("register"), calls_of(ops)))
    assert len(components(check.entries, check.model)) == 1 and check.verdict.method != "split search"


@settings(max_examples=100, deadline=None)
@given(kv_ops(max_ops=12, procs=4, keys=3), st.integers(1, 40))
def test_small_step_budgets_reach_the_same_verdict(ops: list[Op], step: int) -> None:
    """Resuming a split search with tiny budgets (as the race does) ends as one long run does."""
    calls = calls_of(ops)
    whole = PartitionCheck(Partition(None, make_model("kv"), calls))
    pieces = PartitionCheck(Partition(None, make_model("kv"), calls))
    want = whole.advance()
    got = None
    for _ in range(100_000):
        got = pieces.advance(step)
        if got is not None:
            break
    assert got is want is True
