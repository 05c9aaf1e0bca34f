"""Property tests: generated histories are valid, the checker agrees with brute force, and the
unique-values fast path agrees with the general search."""

from __future__ import annotations

import dataclasses
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checkers.linearizability.checker import PartitionCheck, check_calls, encode
from checkers.linearizability.search import Search
from checkers.models import make_model
from checkers.models.base import Partition
from checkers.models.unique_register import unique_register_verdict
from harness.history.op import Op, OpType
from tests.checkers.linearizability.histories import calls_of, oracle, register_ops

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def verdict(ops: list[Op], model: str, **kw: Any) -> bool | str:
    return check_calls(calls_of(ops), make_model(model), **kw).valid


@SETTINGS
@given(register_ops(max_ops=40, procs=5, cas=True))
def test_sequential_executions_are_valid_cas_register(ops: list[Op]) -> None:
    assert verdict(ops, "cas-register") is True


@SETTINGS
@given(register_ops(max_ops=40, procs=5, cas=True))
def test_sequential_executions_are_valid_etcd(ops: list[Op]) -> None:
    assert verdict(ops, "etcd") is True


@SETTINGS
@given(register_ops(max_ops=60, procs=6, unique=True))
def test_sequential_executions_are_valid_register_without_fast_path(ops: list[Op]) -> None:
    assert verdict(ops, "register", fast=False) is True
    assert verdict(ops, "register") is True


def corrupt(ops: list[Op], pick: int, new_value: Any) -> list[Op]:
    """Change one ok read's result, or one write's value (invocation and completion)."""
    targets = [k for k, op in enumerate(ops)
               if (op.type is OpType.OK and op.f == "read") or (op.type is OpType.INVOKE and op.f == "write")]
    if not targets:
        return ops
    k = targets[pick % len(targets)]
    out = list(ops)
    out[k] = dataclasses.replace(ops[k], value=new_value)
    if ops[k].type is OpType.INVOKE:  # keep the write's completion consistent with its invocation
        for j in range(k + 1, len(ops)):
            if ops[j].process == ops[k].process:
                if ops[j].type is OpType.OK:
                    out[j] = dataclasses.replace(ops[j], value=new_value)
                break
    return out


@settings(max_examples=400, deadline=None)
@given(register_ops(max_ops=6, procs=3, values=3), st.integers(0, 50), st.sampled_from([None, 0, 1, 2]))
def test_agrees_with_brute_force_on_corrupted_register(ops: list[Op], pick: int, value: Any) -> None:
    bad = corrupt(ops, pick, value)
    calls = calls_of(bad)
    assert check_calls(calls, make_model("register")).valid == oracle(calls)
    assert check_calls(calls, make_model("register"), fast=False).valid == oracle(calls)


@settings(max_examples=400, deadline=None)
@given(register_ops(max_ops=6, procs=3, values=3, cas=True), st.integers(0, 50), st.sampled_from([None, 0, 1, 2]))
def test_agrees_with_brute_force_on_corrupted_cas_register_and_etcd(ops: list[Op], pick: int, value: Any) -> None:
    calls = calls_of(corrupt(ops, pick, value))
    assert check_calls(calls, make_model("cas-register")).valid == oracle(calls)
    assert check_calls(calls, make_model("etcd")).valid == oracle(calls, fail_cas_meaningful=True)


@settings(max_examples=500, deadline=None)
@given(register_ops(max_ops=30, procs=5, unique=True), st.integers(0, 100), st.integers(0, 40))
def test_fast_path_agrees_with_search(ops: list[Op], pick: int, value: int) -> None:
    bad = corrupt(ops, pick, value if value % 3 else None)
    model = make_model("register").inner
    entries = model.prune(encode(calls_of(bad), model))
    fast = unique_register_verdict(entries, None)
    slow = Search(entries, model, None).run()
    if fast is not None:
        assert fast == slow
    # Unpruned too: the fast path must not rely on pruning.
    raw = encode(calls_of(bad), model)
    fast_raw = unique_register_verdict(raw, None)
    if fast_raw is not None:
        assert fast_raw == slow


@settings(max_examples=200, deadline=None)
@given(register_ops(max_ops=25, procs=4, unique=True))
def test_fast_path_decides_unique_histories(ops: list[Op]) -> None:
    check = PartitionCheck(Partition(None, make_model("register").inner, calls_of(ops)))  # type: ignore[arg-type]
    assert check.verdict.method in ("fast-path", "empty")
    assert check.valid is True
