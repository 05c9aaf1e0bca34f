"""The history generator: deterministic, streaming, valid, and anomalies land where it says."""

from __future__ import annotations

import types

from checkers.gen_history import HistoryGenerator
from checkers.linearizability.checker import check_calls
from checkers.models import make_model
from harness.history.pairing import pair_calls


def test_same_seed_same_history() -> None:
    a = [op.to_dict() for op in HistoryGenerator(300, keys=5, processes=4, seed=7)]
    b = [op.to_dict() for op in HistoryGenerator(300, keys=5, processes=4, seed=7)]
    c = [op.to_dict() for op in HistoryGenerator(300, keys=5, processes=4, seed=8)]
    assert a == b and a != c


def test_is_a_stream() -> None:
    it = iter(HistoryGenerator(10**9, keys=3))
    assert isinstance(it, types.GeneratorType)
    assert next(it).type.value == "invoke"


def test_generated_histories_are_valid() -> None:
    for seed in range(5):
        ops = list(HistoryGenerator(2000, keys=20, processes=10, unique_values=seed % 2 == 0, seed=seed,
                                    info_rate=0.05))
        assert sum(op.type.value == "invoke" for op in ops) == 2000
        assert check_calls(pair_calls(ops), make_model("register")).valid is True


def test_anomalies_are_found_in_their_keys() -> None:
    gen = HistoryGenerator(5000, keys=50, processes=10, unique_values=True, seed=3, anomalies=4)
    ops = list(gen)
    assert len(gen.injected) == 4
    for fast in (True, False):
        result = check_calls(pair_calls(ops), make_model("register"), all_violations=True, fast=fast)
        assert result.valid is False
        assert sorted(result.invalid_keys) == sorted(gen.injected)
