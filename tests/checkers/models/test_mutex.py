"""Knossos's mutex: steps, encoding, the greedy fast path, and the checker against a brute-force oracle."""

from __future__ import annotations

from itertools import permutations
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checkers.linearizability.checker import check_calls, encode
from checkers.models import UNKNOWN, ModelError, choose_model, make_model
from checkers.models.mutex import Mutex
from harness.history.op import Call, Op, OpType
from harness.history.pairing import pair_calls

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def history(*events: tuple[Any, str, str]) -> list[Call]:
    return pair_calls([Op(i, i, p, OpType(t), f, error="not-held" if t == "fail" else None)
                       for i, (p, t, f) in enumerate(events)])


def test_steps() -> None:
    m = Mutex()
    assert m.init() is False
    assert m.step(False, "acquire", True) == (True, True)
    assert m.step(True, "acquire", True) == (False, True)
    assert m.step(True, "release", True) == (True, False)
    assert m.step(False, "release", UNKNOWN) == (False, False)
    assert m.describe_state(True) == "held" and m.describe_operation("release", UNKNOWN) == "release (outcome unknown)"
    assert Mutex("held").init() is True and Mutex(True).init() is True and Mutex("free").init() is False
    with pytest.raises(ModelError):
        Mutex(7)


def test_two_acquires_without_a_release_are_invalid_and_the_fixed_twin_valid() -> None:
    bad = history((0, "invoke", "acquire"), (0, "ok", "acquire"),
                  (1, "invoke", "acquire"), (1, "ok", "acquire"),
                  (0, "invoke", "release"), (0, "ok", "release"))
    fixed = history((0, "invoke", "acquire"), (0, "ok", "acquire"),
                    (0, "invoke", "release"), (0, "ok", "release"),
                    (1, "invoke", "acquire"), (1, "ok", "acquire"))
    for fast in (True, False):
        assert check_calls(bad, make_model("mutex"), fast=fast).valid is False
        assert check_calls(fixed, make_model("mutex"), fast=fast).valid is True


def test_a_failed_release_did_not_happen() -> None:
    # Process 1's release fails with :not-held: dropped, so process 0 still holds the lock and 1's acquire
    # after it cannot succeed.
    calls = history((0, "invoke", "acquire"), (0, "ok", "acquire"),
                    (1, "invoke", "release"), (1, "fail", "release"),
                    (1, "invoke", "acquire"), (1, "ok", "acquire"))
    assert check_calls(calls, make_model("mutex")).valid is False
    assert make_model("mutex").inner.encode(calls[1]) is None


def test_model_is_chosen_and_other_functions_refused() -> None:
    assert choose_model("edn", {"acquire", "release"}) == "mutex"
    with pytest.raises(ModelError, match="no function 'read'"):
        check_calls(history((0, "invoke", "read"), (0, "ok", "read")), make_model("mutex"))


@st.composite
def lock_ops(draw: Any, *, max_ops: int = 7, procs: int = 3, info: bool = True) -> list[Op]:
    """A history of a real lock that knows its holder: an acquire of a held lock fails, a release by a
    process that does not hold it fails with :not-held; each op applies at one instant inside it; an info
    op may or may not have applied."""
    n_ops = draw(st.integers(1, max_ops))
    holder: list[Any] = [None]
    ops: list[Op] = []
    pid = list(range(procs))
    phase = [0] * procs
    cur: list[Any] = [None] * procs
    started = 0
    while started < n_ops or any(phase):
        s = draw(st.integers(0, procs - 1))
        t = len(ops)
        if phase[s] == 0:
            if started >= n_ops:
                continue
            started += 1
            f = draw(st.sampled_from(["acquire", "release"]))
            cur[s] = [f, None]
            phase[s] = 1
            ops.append(Op(t, t, pid[s], OpType.INVOKE, f))
            continue
        f, _ = cur[s]
        crash = info and draw(st.integers(0, 5)) == 0
        if phase[s] == 1 and (not crash or draw(st.booleans())):
            if f == "acquire":
                cur[s][1] = holder[0] is None
                if cur[s][1]:
                    holder[0] = s
            else:
                cur[s][1] = holder[0] == s
                if cur[s][1]:
                    holder[0] = None
            phase[s] = 2
            if not crash:
                continue
        phase[s] = 0
        if crash:
            ops.append(Op(t, t, pid[s], OpType.INFO, f, error="timeout"))
            pid[s] += procs
        elif cur[s][1]:
            ops.append(Op(t, t, pid[s], OpType.OK, f))
        else:
            ops.append(Op(t, t, pid[s], OpType.FAIL, f, error=None if f == "acquire" else "not-held"))
    return ops


def flip(ops: list[Op], pick: int) -> list[Op]:
    """Turn one completion's outcome over (ok to fail, fail to ok)."""
    targets = [i for i, op in enumerate(ops) if op.type in (OpType.OK, OpType.FAIL)]
    if not targets:
        return ops
    i = targets[pick % len(targets)]
    out = list(ops)
    op = ops[i]
    out[i] = Op(op.index, op.time, op.process, OpType.FAIL if op.type is OpType.OK else OpType.OK, op.f)
    return out


def oracle(calls: list[Call]) -> bool:
    """Every order of the ok calls plus every subset of the info calls, with Knossos's mutex."""
    ok = [c for c in calls if c.outcome is OpType.OK]
    infos = [c for c in calls if c.outcome is OpType.INFO]

    def ret(c: Call) -> float:
        return float("inf") if c.outcome is not OpType.OK else c.return_time

    for mask in range(1 << len(infos)):
        chosen = ok + [c for k, c in enumerate(infos) if mask >> k & 1]
        for order in permutations(chosen):
            if any(ret(order[b]) < order[a].call_time for a in range(len(order)) for b in range(a + 1, len(order))):
                continue
            held = False
            for c in order:
                if (c.f == "acquire") == held:
                    break
                held = not held
            else:
                return True
    return False


@SETTINGS
@given(lock_ops(max_ops=40, procs=5))
def test_real_locks_are_valid(ops: list[Op]) -> None:
    assert check_calls(pair_calls(ops), make_model("mutex")).valid is True


@SETTINGS
@given(lock_ops(), st.integers(0, 50))
def test_agrees_with_brute_force(ops: list[Op], pick: int) -> None:
    bad = flip(ops, pick)
    want = oracle(pair_calls(bad))
    for fast in (True, False):
        assert check_calls(pair_calls(bad), make_model("mutex"), fast=fast).valid is want


@SETTINGS
@given(lock_ops(max_ops=30, procs=5, info=False), st.integers(0, 60), st.booleans())
def test_fast_path_decides_definite_histories_as_the_search_does(ops: list[Op], pick: int, held: bool) -> None:
    bad = flip(ops, pick)
    model = Mutex(held)
    entries = encode(pair_calls(bad), model)
    fast = model.fast_check(entries, held)
    assert fast is not None
    assert fast == check_calls(pair_calls(bad), make_model("mutex", held), fast=False).valid
