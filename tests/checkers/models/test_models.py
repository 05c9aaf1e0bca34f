"""Each model's step, encoding and model choice."""

from __future__ import annotations

from typing import Any

import pytest

from checkers.linearizability.checker import check_calls
from checkers.models import UNKNOWN, ModelError, choose_model, make_model
from checkers.models.etcd import Etcd
from checkers.models.grow_set import GrowSet
from checkers.models.kv import KvString
from checkers.models.log import Log
from checkers.models.register import Register
from harness.history.op import Op, OpType
from harness.history.pairing import pair_calls


def history(*events: tuple[Any, str, str, Any, Any]) -> list[Op]:
    """(process, type, f, key, value) tuples -> ops."""
    return [Op(i, i, p, OpType(t), f, k, v) for i, (p, t, f, k, v) in enumerate(events)]


def test_register_steps() -> None:
    r = Register(None, allow_cas=True)
    assert r.step(None, ("read", None), None) == (True, None)
    assert r.step(1, ("read", None), 2)[0] is False
    assert r.step(1, ("write", 5), True) == (True, 5)
    assert r.step(1, ("cas", (1, 2)), True) == (True, 2)
    assert r.step(3, ("cas", (1, 2)), True)[0] is False
    assert r.step(3, ("cas", (1, 2)), UNKNOWN) == (True, 3)


def test_etcd_failed_cas_means_mismatch() -> None:
    e = Etcd()
    assert e.step(1, ("cas", (1, 2)), False)[0] is False
    assert e.step(3, ("cas", (1, 2)), False) == (True, 3)


def test_kv_log_set_steps() -> None:
    kv = KvString()
    assert kv.step("ab", ("append", "c"), True) == (True, "abc")
    assert kv.step("ab", ("get", None), "ab")[0] and not kv.step("ab", ("get", None), "a")[0]
    log = Log()
    assert log.step((), ("append", "x"), 0) == (True, ("x",))
    assert log.step(("x",), ("append", "y"), 0)[0] is False
    assert log.step(("x", "y"), ("read", (1, None)), ("y",))[0]
    s = GrowSet()
    assert s.step(frozenset(), ("add", 1), True) == (True, frozenset({1}))
    assert s.step(frozenset({1}), ("read", None), frozenset({1}))[0]


def test_register_rejects_cas() -> None:
    calls = pair_calls(history((0, "invoke", "cas", None, [1, 2]), (0, "ok", "cas", None, [1, 2])))
    with pytest.raises(ModelError):
        check_calls(calls, make_model("register"))


def test_keys_are_independent_registers() -> None:
    ops = history(
        (0, "invoke", "write", "a", 1), (0, "ok", "write", "a", 1),
        (1, "invoke", "read", "b", None), (1, "ok", "read", "b", None),
        (1, "invoke", "read", "a", None), (1, "ok", "read", "a", 2),
    )
    result = check_calls(pair_calls(ops), make_model("register"))
    assert result.valid is False and result.invalid_keys == ["a"] and result.partitions == 2


def test_init_sets_the_initial_value() -> None:
    ops = history((0, "invoke", "read", None, None), (0, "ok", "read", None, 0))
    assert check_calls(pair_calls(ops), make_model("register")).valid is False
    assert check_calls(pair_calls(ops), make_model("register", 0)).valid is True


def test_info_write_may_take_effect_later_or_never() -> None:
    ops = history(
        (0, "invoke", "write", None, 1), (0, "info", "write", None, 1),
        (1, "invoke", "read", None, None), (1, "ok", "read", None, None),
        (1, "invoke", "read", None, None), (1, "ok", "read", None, 1),
    )
    assert check_calls(pair_calls(ops), make_model("register")).valid is True
    stale = [*ops, Op(6, 6, 1, OpType.INVOKE, "read", None, None), Op(7, 7, 1, OpType.OK, "read", None, None)]
    assert check_calls(pair_calls(stale), make_model("register")).valid is False


def test_choose_model() -> None:
    assert choose_model("porcupine-etcd", []) == "etcd"
    assert choose_model("porcupine-kv", []) == "kv"
    assert choose_model("jsonl", ["read", "write", "cas"]) == "cas-register"
    assert choose_model("jsonl", ["read", "write"]) == "register"
    assert choose_model("jsonl", ["add", "read"]) == "set"
    assert choose_model("jsonl", ["append", "read"]) == "log"
    with pytest.raises(ModelError):
        make_model("nope")
