"""Knossos's multi-register: steps, encoding, and the checker against a brute-force oracle."""

from __future__ import annotations

from itertools import permutations
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checkers.linearizability.checker import check_calls, encode
from checkers.models import UNKNOWN, ModelError, choose_model, make_model
from checkers.models.multi_register import MultiRegister
from harness.history.op import Call, Op, OpType
from harness.history.pairing import pair_calls

SETTINGS = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def encoded(m: MultiRegister, call: Call) -> tuple[Any, Any]:
    enc = m.encode(call)
    assert enc is not None
    return enc


def txn_call(output: Any, outcome: OpType = OpType.OK, input: Any = None) -> Call:
    invoke = Op(0, 0, 0, OpType.INVOKE, "txn", value=input if input is not None else output)
    complete = Op(1, 1, 0, outcome, "txn", value=output)
    return Call(0, 0, "txn", None, invoke.value, output, outcome, 0, 1, invoke, complete)


def test_steps_apply_micro_ops_in_order() -> None:
    m = MultiRegister({"x": 0, "y": 0})
    inp, out = encoded(m, txn_call([["read", "x", 0], ["write", "x", 3], ["read", "x", 3], ["write", "y", 1]]))
    init = m.init()
    assert init == (0, 0)
    assert m.step(init, inp, out) == (True, (3, 1))
    bad_inp, bad_out = encoded(m, txn_call([["read", "x", 0], ["write", "x", 3], ["read", "x", 0]]))
    assert m.step(init, bad_inp, bad_out) == (False, init)
    assert m.describe_operation(inp, out) == "txn [read 'x' -> 0, write 'x' 3, read 'x' -> 3, write 'y' 1]"
    assert m.describe_state((3, None)) == "{'x' 3, 'y' absent}"


def test_nil_reads_follow_the_semantics() -> None:
    knossos = MultiRegister({"x": 0}, nil_read="any")
    strict = MultiRegister({"x": 0}, nil_read="absent")
    call = txn_call([["read", "x", None], ["write", "y", 2]])
    enc = knossos.encode(call)
    assert enc is not None and enc[0] == ((1, 1, 2),)  # the nil read is left out
    assert knossos.encode(txn_call([["read", "x", None]])) is None
    inp, out = encoded(strict, call)
    assert strict.step(strict.init(), inp, out)[0] is False  # x is 0, not absent


def test_fail_is_dropped_and_info_reads_constrain_nothing() -> None:
    m = MultiRegister({"x": 0})
    assert m.encode(txn_call([["write", "x", 1]], OpType.FAIL)) is None
    inp, out = encoded(m, txn_call(None, OpType.INFO, input=[["read", "x", None], ["write", "x", 5]]))
    assert out is UNKNOWN and inp == ((1, 0, 5),)
    assert m.encode(txn_call(None, OpType.INFO, input=[["read", "x", None]])) is None


def test_bad_values_are_model_errors() -> None:
    with pytest.raises(ModelError, match="map of keys"):
        MultiRegister([0, 0])
    with pytest.raises(ModelError, match="micro-op"):
        MultiRegister().encode(txn_call([["append", "x", 1]]))
    with pytest.raises(ModelError, match="no function 'read'"):
        make_model("multi-register").inner.encode(
            Call(0, 0, "read", None, None, 1, OpType.OK, 0, 1, Op(0, 0, 0, OpType.INVOKE, "read"), None))


def test_model_is_chosen_for_txn_histories() -> None:
    assert choose_model("edn", {"txn"}) == "multi-register"


def test_prune_drops_info_writes_nobody_read() -> None:
    events = [(0, "invoke", [["write", "x", 7]]), (0, "info", None),
              (1, "invoke", [["write", "x", 8]]), (1, "info", None),
              (2, "invoke", [["read", "x", None]]), (2, "ok", [["read", "x", 8]])]
    calls = pair_calls([Op(i, i, p, OpType(t), "txn", None, v) for i, (p, t, v) in enumerate(events)])
    m = MultiRegister({"x": 0})
    kept = m.prune(encode(calls, m))
    assert [e.call.id for e in kept] == [1, 2]


# --- generated histories against brute force ---------------------------------------------------------


@st.composite
def txn_ops(draw: Any, *, max_ops: int = 6, procs: int = 3, single: bool = False, unique: bool = False) -> list[Op]:
    """A history of a real multi-register ({x: 0}, y absent): each txn applies at one instant between its
    invocation and completion; an info txn may or may not have applied; a fail txn did not."""
    n_ops = draw(st.integers(1, max_ops))
    regs: dict[str, Any] = {"x": 0}
    ops: list[Op] = []
    pid = list(range(procs))
    phase = [0] * procs
    cur: list[Any] = [None] * procs
    started = counter = 0
    while started < n_ops or any(phase):
        s = draw(st.integers(0, procs - 1))
        t = len(ops)
        if phase[s] == 0:
            if started >= n_ops:
                continue
            started += 1
            txn = []
            for _ in range(1 if single else draw(st.integers(1, 3))):
                key = draw(st.sampled_from("xy"))
                if draw(st.booleans()):
                    txn.append(["read", key, None])
                else:
                    counter += 1
                    txn.append(["write", key, counter if unique else draw(st.integers(0, 2))])
            cur[s] = [txn, None]
            phase[s] = 1
            ops.append(Op(t, t, pid[s], OpType.INVOKE, "txn", None, txn))
            continue
        txn, result = cur[s]
        if phase[s] == 1:
            outcome = draw(st.sampled_from([OpType.OK] * 5 + [OpType.INFO, OpType.FAIL]))
            if outcome is OpType.FAIL:
                phase[s] = 0
                ops.append(Op(t, t, pid[s], OpType.FAIL, "txn", None, txn))
                continue
            if outcome is OpType.OK or draw(st.booleans()):
                cur[s][1] = result = apply(regs, txn)
            if outcome is OpType.OK:
                phase[s] = 2
                continue
        else:
            outcome = draw(st.sampled_from([OpType.OK] * 6 + [OpType.INFO]))
        phase[s] = 0
        if outcome is OpType.INFO:
            ops.append(Op(t, t, pid[s], OpType.INFO, "txn", None, txn))
            pid[s] += procs
        else:
            ops.append(Op(t, t, pid[s], OpType.OK, "txn", None, result))
    return ops


def apply(regs: dict[str, Any], txn: list[list[Any]]) -> list[list[Any]]:
    """Run a transaction on ``regs``; its micro-ops with the values read."""
    result = []
    for f, k, v in txn:
        if f == "read":
            result.append([f, k, regs.get(k)])
        else:
            regs[k] = v
            result.append([f, k, v])
    return result


def corrupt(ops: list[Op], pick: int, value: Any) -> list[Op]:
    """Change one ok txn's first read to ``value``."""
    targets = [i for i, op in enumerate(ops) if op.type is OpType.OK and any(m[0] == "read" for m in op.value)]
    if not targets:
        return ops
    i = targets[pick % len(targets)]
    txn = [list(m) for m in ops[i].value]
    first = next(m for m in txn if m[0] == "read")
    first[2] = value
    out = list(ops)
    out[i] = Op(ops[i].index, ops[i].time, ops[i].process, OpType.OK, "txn", None, txn)
    return out


def oracle(calls: list[Call], init: dict[str, Any], nil_any: bool) -> bool:
    """Every order of the ok calls plus every subset of the info calls, with Knossos's step."""
    ok = [c for c in calls if c.outcome is OpType.OK]
    infos = [c for c in calls if c.outcome is OpType.INFO]

    def ret(c: Call) -> float:
        return float("inf") if c.outcome is not OpType.OK else c.return_time

    for mask in range(1 << len(infos)):
        chosen = ok + [c for k, c in enumerate(infos) if mask >> k & 1]
        for order in permutations(chosen):
            if any(ret(order[b]) < order[a].call_time for a in range(len(order)) for b in range(a + 1, len(order))):
                continue
            regs = dict(init)
            legal = True
            for c in order:
                for f, k, v in (c.output if c.outcome is OpType.OK else c.input):
                    if f == "write":
                        regs[k] = v
                    elif c.outcome is OpType.OK and not (v is None and nil_any) and regs.get(k) != v:
                        legal = False
                        break
                if not legal:
                    break
            if legal:
                return True
    return False


@SETTINGS
@given(txn_ops(max_ops=30, procs=5))
def test_real_executions_are_valid(ops: list[Op]) -> None:
    for nil_read in ("any", "absent"):
        model = make_model("multi-register", {"x": 0}, nil_read=nil_read)
        assert check_calls(pair_calls(ops), model).valid is True


@SETTINGS
@given(txn_ops(), st.integers(0, 50), st.sampled_from([0, 1, 2, 3, None]), st.sampled_from(["any", "absent"]))
def test_agrees_with_brute_force(ops: list[Op], pick: int, value: Any, nil_read: str) -> None:
    calls = pair_calls(corrupt(ops, pick, value))
    want = oracle(calls, {"x": 0}, nil_read == "any")
    for fast in (True, False):
        model = make_model("multi-register", {"x": 0}, nil_read=nil_read)
        assert check_calls(pair_calls(corrupt(ops, pick, value)), model, fast=fast).valid is want


@SETTINGS
@given(txn_ops(max_ops=25, procs=4, single=True, unique=True), st.integers(0, 50), st.integers(0, 30))
def test_fast_path_agrees_with_search(ops: list[Op], pick: int, value: int) -> None:
    bad = corrupt(ops, pick, value)
    model = MultiRegister({"x": 0})
    entries = model.prune(encode(pair_calls(bad), model))
    fast = model.fast_check(entries, model.init())
    slow = check_calls(pair_calls(bad), make_model("multi-register", {"x": 0}), fast=False).valid
    assert fast in (slow, None)
    if all(e.output is not UNKNOWN for e in entries):
        assert fast is not None  # one-op transactions with unique writes are decided without search
