"""Symmetry between identical definite ops (a dominated op is linearized after the op that dominates
it) never changes a verdict: hypothesis against the brute-force oracles, on histories with few values
and many overlapping ops, so identical ops are common; and it pays on a hard generated history."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checkers.gen_history import HistoryGenerator
from checkers.linearizability import search
from checkers.linearizability.checker import encode
from checkers.linearizability.search import Search
from checkers.models import make_model
from harness.history.op import Call, Op
from harness.history.pairing import pair_calls
from tests.checkers.linearizability.histories import calls_of, kv_ops, kv_oracle, oracle, register_ops
from tests.checkers.linearizability.test_kv_guided import corrupt_get
from tests.checkers.linearizability.test_properties import corrupt


def search_verdict(calls: list[Call], model_name: str, symmetry: bool) -> bool | None:
    """The search's verdict with the symmetry rule from the first step (or without it)."""
    model: Any = make_model(model_name).inner
    entries = model.prune(encode(calls, model))
    return Search(entries, model, model.init(), symmetry=symmetry, eager=True).run()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(register_ops(max_ops=7, procs=4, values=2, cas=True), st.integers(0, 50), st.sampled_from([None, 0, 1]),
       st.sampled_from([0, 1, 3, 7, 15]))
def test_symmetry_switched_on_mid_search_agrees_with_brute_force(
        monkeypatch: pytest.MonkeyPatch, ops: list[Op], pick: int, value: Any, mask: int) -> None:
    """Normally the rule starts after CHECK_EVERY steps; here after 1, 2, 4, 8 or 16."""
    monkeypatch.setattr(search, "_CHECK_MASK", mask)
    calls = calls_of(corrupt(ops, pick, value))
    model: Any = make_model("etcd").inner
    entries = model.prune(encode(calls, model))
    assert Search(entries, model, model.init()).run() is oracle(calls, fail_cas_meaningful=True)


@settings(max_examples=400, deadline=None)
@given(register_ops(max_ops=7, procs=4, values=2, cas=True), st.integers(0, 50), st.sampled_from([None, 0, 1]))
def test_symmetry_agrees_with_brute_force_on_registers(ops: list[Op], pick: int, value: Any) -> None:
    calls = calls_of(corrupt(ops, pick, value))
    for name, want in (("cas-register", oracle(calls)), ("etcd", oracle(calls, fail_cas_meaningful=True))):
        assert search_verdict(calls, name, symmetry=True) is want
        assert search_verdict(calls, name, symmetry=False) is want


@settings(max_examples=300, deadline=None)
@given(kv_ops(max_ops=7, procs=4, keys=1), st.integers(0, 50), st.sampled_from(["", "a", "aa", "ab"]),
       st.booleans())
def test_symmetry_agrees_with_brute_force_on_kv(ops: list[Op], pick: int, value: str, bad: bool) -> None:
    calls = calls_of(corrupt_get(ops, pick, value) if bad else ops)
    want = kv_oracle(calls)
    assert search_verdict(calls, "kv", symmetry=True) is want
    assert search_verdict(calls, "kv", symmetry=False) is want


def test_symmetry_searches_less_on_a_hard_history() -> None:
    calls = pair_calls(list(HistoryGenerator(200, keys=1, processes=40, seed=1, info_rate=0.0)))
    model: Any = make_model("cas-register").inner
    entries = model.prune(encode(calls, model))
    on = Search(entries, model, model.init(), symmetry=True)  # set up after CHECK_EVERY steps
    off = Search(entries, model, model.init(), symmetry=False)
    assert on.run() is True and off.run() is True
    assert on.nodes < off.nodes
