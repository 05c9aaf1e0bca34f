"""Test helpers: simulated histories of a sequential register, and a brute-force oracle."""

from __future__ import annotations

from itertools import permutations
from typing import Any

from hypothesis import strategies as st

from harness.history.op import Call, Op, OpType
from harness.history.pairing import pair_calls


@st.composite
def register_ops(draw: Any, *, max_ops: int = 8, procs: int = 3, values: int = 3, cas: bool = False,
                 info: bool = True, unique: bool = False) -> list[Op]:
    """A history from a real sequential register, with random concurrency and info outcomes.

    Each op takes effect at one instant between its invocation and completion; an info op may or may
    not have taken effect. So the history is linearizable by construction.
    """
    n_ops = draw(st.integers(1, max_ops))
    value: Any = None
    ops: list[Op] = []
    pid = list(range(procs))
    phase = [0] * procs  # 0 idle, 1 invoked, 2 applied
    cur: list[Any] = [None] * procs
    started = 0
    counter = 0
    while started < n_ops or any(phase):
        s = draw(st.integers(0, procs - 1))
        t = len(ops)
        if phase[s] == 0:
            if started >= n_ops:
                continue
            started += 1
            kinds = ["read", "write"] + (["cas"] if cas else [])
            f = draw(st.sampled_from(kinds))
            if f == "write":
                counter += 1
                arg: Any = counter if unique else draw(st.integers(0, values - 1))
            elif f == "cas":
                arg = [draw(st.integers(0, values - 1)), draw(st.integers(0, values - 1))]
            else:
                arg = None
            cur[s] = [f, arg, None, False]
            phase[s] = 1
            ops.append(Op(t, t, pid[s], OpType.INVOKE, f, None, arg))
            continue
        f, arg, _, _ = cur[s]
        crash = info and draw(st.booleans()) and draw(st.booleans()) and draw(st.booleans())
        if phase[s] == 1 and not crash:
            if f == "write":
                value = arg
            elif f == "read":
                cur[s][2] = value
            else:
                cur[s][3] = value == arg[0]
                if cur[s][3]:
                    value = arg[1]
            phase[s] = 2
            continue
        phase[s] = 0
        if crash:
            ops.append(Op(t, t, pid[s], OpType.INFO, f, None, arg))
            pid[s] += procs
        elif f == "read":
            ops.append(Op(t, t, pid[s], OpType.OK, f, None, cur[s][2]))
        elif f == "cas":
            ops.append(Op(t, t, pid[s], OpType.OK if cur[s][3] else OpType.FAIL, f, None, arg))
        else:
            ops.append(Op(t, t, pid[s], OpType.OK, f, None, arg))
    return ops


def oracle(calls: list[Call], init: Any = None, *, fail_cas_meaningful: bool = False) -> bool:
    """Brute force: try every order of every subset of the info calls plus all definite calls.

    Semantics: read returns the value; write sets it; an ok cas swapped; a failed cas is dropped, or
    (``fail_cas_meaningful``, etcd) means the value was not ``old``. Info calls may happen or not.
    """
    definite = [c for c in calls if c.outcome is OpType.OK or (c.outcome is OpType.FAIL and fail_cas_meaningful
                                                                and c.f == "cas")]
    infos = [c for c in calls if c.outcome is OpType.INFO and c.f != "read"]

    def ret(c: Call) -> float:
        return float("inf") if c.outcome is OpType.INFO or c.complete is None else c.complete.index

    for mask in range(1 << len(infos)):
        chosen = definite + [c for k, c in enumerate(infos) if mask >> k & 1]
        for order in permutations(chosen):
            ok = True
            for a in range(len(order)):
                for b in range(a + 1, len(order)):
                    if ret(order[b]) < order[a].invoke.index:
                        ok = False
                        break
                if not ok:
                    break
            if not ok:
                continue
            value = init
            for c in order:
                if c.f == "read":
                    if c.output != value:
                        ok = False
                        break
                elif c.f == "write":
                    value = c.input
                else:
                    old, new = c.input
                    if c.outcome is OpType.FAIL:
                        if value == old:
                            ok = False
                            break
                    elif value == old:
                        value = new
                    elif c.outcome is OpType.OK:
                        ok = False
                        break
            if ok:
                return True
    return False


def calls_of(ops: list[Op]) -> list[Call]:
    """Pair a test history's ops."""
    return pair_calls(ops)


@st.composite
def kv_ops(draw: Any, *, max_ops: int = 8, procs: int = 3, keys: int = 1, info: bool = True) -> list[Op]:
    """A history from a real sequential string store (get, put, append), like :func:`register_ops`.

    Appended pieces are short and may repeat or overlap ("a", "b", "ab"), so a string can be spelt by
    pieces in more than one way.
    """
    n_ops = draw(st.integers(1, max_ops))
    store = {str(k): "" for k in range(keys)}
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
            f = draw(st.sampled_from(["get", "get", "append", "append", "put"]))
            key = str(draw(st.integers(0, keys - 1)))
            arg = None if f == "get" else draw(st.sampled_from(["a", "b", "ab", "", "c"]))
            cur[s] = [f, key, arg, None]
            phase[s] = 1
            ops.append(Op(t, t, pid[s], OpType.INVOKE, f, key, arg))
            continue
        f, key, arg, _ = cur[s]
        crash = info and draw(st.booleans()) and draw(st.booleans()) and draw(st.booleans())
        if phase[s] == 1 and not crash:
            if f == "get":
                cur[s][3] = store[key]
            elif f == "put":
                store[key] = arg
            else:
                store[key] += arg
            phase[s] = 2
            continue
        phase[s] = 0
        if crash:
            ops.append(Op(t, t, pid[s], OpType.INFO, f, key, arg))
            pid[s] += procs
        else:
            ops.append(Op(t, t, pid[s], OpType.OK, f, key, cur[s][3] if f == "get" else arg))
    return ops


def kv_oracle(calls: list[Call]) -> bool:
    """Brute force for the kv model: every order of the definite calls plus every subset of info ones."""
    definite = [c for c in calls if c.outcome is OpType.OK]
    infos = [c for c in calls if c.outcome is OpType.INFO and c.f != "get"]

    def ret(c: Call) -> float:
        return float("inf") if c.outcome is OpType.INFO or c.complete is None else c.complete.index

    for mask in range(1 << len(infos)):
        chosen = definite + [c for k, c in enumerate(infos) if mask >> k & 1]
        for order in permutations(chosen):
            if any(ret(order[b]) < order[a].invoke.index
                   for a in range(len(order)) for b in range(a + 1, len(order))):
                continue
            store: dict[Any, str] = {}
            for c in order:
                value = store.get(c.key, "")
                if c.f == "get":
                    if c.output != value:
                        break
                elif c.f == "put":
                    store[c.key] = c.input
                else:
                    store[c.key] = value + c.input
            else:
                return True
    return False
