"""The kv model's guidance (``feasible``) never changes a verdict: hypothesis against brute force,
with and without it, partitioned and as one keyed partition; and the piece-spelling helper."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from checkers.linearizability.checker import PartitionCheck, check_calls
from checkers.models import make_model
from checkers.models.base import Partition
from checkers.models.kv import KvString, spells
from harness.history.op import Op, OpType
from tests.checkers.linearizability.histories import calls_of, kv_ops, kv_oracle


def corrupt_get(ops: list[Op], pick: int, value: str) -> list[Op]:
    """Change one ok get's result."""
    targets = [k for k, op in enumerate(ops) if op.type is OpType.OK and op.f == "get"]
    if not targets:
        return ops
    k = targets[pick % len(targets)]
    out = list(ops)
    out[k] = dataclasses.replace(ops[k], value=value)
    return out


@settings(max_examples=400, deadline=None)
@given(kv_ops(max_ops=7, procs=3, keys=1), st.integers(0, 50), st.sampled_from(["", "a", "ab", "ba", "abc", "c"]),
       st.booleans())
def test_guided_agrees_with_brute_force(ops: list[Op], pick: int, value: str, corrupt: bool) -> None:
    calls = calls_of(corrupt_get(ops, pick, value) if corrupt else ops)
    want = kv_oracle(calls)
    assert check_calls(calls, make_model("kv")).valid is want
    assert check_calls(calls, make_model("kv"), guided=False).valid is want
    if not corrupt:
        assert want is True


@settings(max_examples=300, deadline=None)
@given(kv_ops(max_ops=7, procs=3, keys=2), st.integers(0, 50), st.sampled_from(["", "a", "ab", "ba", "c"]),
       st.booleans())
def test_guided_unpartitioned_agrees_with_brute_force(ops: list[Op], pick: int, value: str, corrupt: bool) -> None:
    calls = calls_of(corrupt_get(ops, pick, value) if corrupt else ops)
    want = kv_oracle(calls)
    assert check_calls(calls, make_model("kv"), partition=False).valid is want
    assert check_calls(calls, make_model("kv")).valid is want


@settings(max_examples=200, deadline=None)
@given(kv_ops(max_ops=40, procs=6, keys=1))
def test_guided_accepts_real_executions_and_searches_less(ops: list[Op]) -> None:
    nodes = []
    for guided in (True, False):
        part = Partition(None, make_model("kv").inner, calls_of(ops))  # type: ignore[arg-type]
        check = PartitionCheck(part, guided=guided)
        assert check.advance() is True
        nodes.append(check.verdict.nodes)
    assert nodes[0] <= nodes[1]


def test_spells() -> None:
    assert spells("xab", 1, ["b", "a"])
    assert spells("xab", 3, [])
    assert spells("abab", 0, ["ab", "a", "b"])  # needs backtracking past "ab" or not: both work
    assert spells("aab", 0, ["a", "ab"])
    assert not spells("aab", 0, ["aa", "ab"])
    assert not spells("aba", 0, ["ab", "b"])
    assert not spells("aa", 0, ["a"])  # each piece once
    assert spells("aba", 0, ["ab", "a", "ba", "b"])
    assert spells("abcab", 0, ["abc", "ab", "a", "bcab"])  # "a" + "bcab"


def test_feasible_prunes_only_the_impossible() -> None:
    m = KvString()
    get = ("get", None)
    assert m.feasible("x", get, "xab", [("append", "a"), ("append", "b")])
    assert not m.feasible("x", get, "xba", [("append", "a")])
    assert not m.feasible("y", get, "xab", [("append", "a"), ("append", "b")])
    assert m.feasible("y", get, "xab", [("put", "x"), ("append", "ab")])
    assert m.feasible("y", get, "y", [])
    assert m.feasible("y", ("append", "z"), True, [])
