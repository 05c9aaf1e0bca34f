"""The list-append workload: transactions over a skewed, retiring key pool, final reads of every key, its
options, and runs on the fake transactional store."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from checkers.txn import TxnChecker
from harness.config import TestConfig
from harness.launch import prepare
from harness.registry import Refused, load_workload
from harness.testing import FakeSystem, MemoryBackend, run_fake
from workloads.list_append import ListAppendWorkload
from workloads.txn_keys import EXTRA_KEY, TxnOptions


def config(**fields: object) -> TestConfig:
    base: dict[str, object] = {"system": "fake", "workload": "list-append", "time_limit": 1.5, "rate": 0.0,
                               "concurrency": 10, "recovery": 0.0, "seed": 5}
    return TestConfig(**{**base, **fields})  # type: ignore[arg-type]


def generate(workload: ListAppendWorkload, n: int, seed: int = 1) -> list[list[list[Any]]]:
    source = workload.generator(random.Random(seed), 10)
    return [source.next_op(i % 10).value for i in range(n)]


def test_transactions_are_1_to_n_appends_and_reads_with_values_unique_per_key() -> None:
    workload = ListAppendWorkload(config())
    txns = generate(workload, 3000)
    assert {len(t) for t in txns} == {1, 2, 3, 4}
    micro_ops = [m for t in txns for m in t]
    assert {m[0] for m in micro_ops} == {"append", "r"}
    assert all(m[2] is None for m in micro_ops if m[0] == "r")
    appends: dict[object, list[object]] = {}
    for f, k, v in micro_ops:
        if f == "append":
            appends.setdefault(k, []).append(v)
    for values in appends.values():  # the n-th append of a key appends n: unique, and at most writes-per-key
        assert values == list(range(1, len(values) + 1)) and len(values) <= 16


def test_keys_retire_after_their_writes_and_fresh_ones_take_their_place() -> None:
    workload = ListAppendWorkload(config())
    txns = generate(workload, 3000)
    pool = workload._source.pool  # type: ignore[union-attr]
    assert len(pool.slots) == len(set(pool.slots)) == 8  # the active pool keeps its size
    retired = [k for k, n in pool.writes.items() if n >= 16]
    assert len(retired) > 20 and not set(retired) & set(pool.slots)
    assert {m[1] for t in txns for m in t} <= set(pool.writes)  # keys are the pool's, fresh ones counted up
    assert list(pool.writes) == list(range(len(pool.writes)))


def test_the_hottest_slot_is_drawn_about_as_often_as_all_the_others() -> None:
    workload = ListAppendWorkload(config(extra={EXTRA_KEY: {"writes-per-key": 1_000_000}}))  # no retiring
    txns = generate(workload, 2000)
    keys = Counter(m[1] for t in txns for m in t)
    total = sum(keys.values())
    assert set(keys) == set(range(8))
    assert 0.45 < keys[0] / total < 0.55 and keys[7] / total < 0.02


def test_final_reads_cover_every_key_ever_used_in_read_only_transactions() -> None:
    workload = ListAppendWorkload(config())
    assert workload.final_ops() == []
    used = {m[1] for t in generate(workload, 500) for m in t}
    final = workload.final_ops()
    assert all(op.f == "txn" and 1 <= len(op.value) <= 4 for op in final)
    assert all(m[0] == "r" and m[2] is None for op in final for m in op.value)
    read = [m[1] for op in final for m in op.value]
    assert len(read) == len(set(read)) and set(read) >= used  # every key in the pool, drawn or not yet


def test_options_come_from_the_test_and_bad_ones_are_one_line() -> None:
    given = config(extra={EXTRA_KEY: {"txn-length": "2", "active-keys": 3, "writes-per-key": "4",
                                      "consistency": "snapshot-isolation, serializable"}})
    workload = load_workload("list-append", given)
    assert isinstance(workload, ListAppendWorkload)
    assert workload.settings == TxnOptions(2, 3, 4, ("snapshot-isolation", "serializable"))
    assert ListAppendWorkload(config()).settings == TxnOptions()
    assert [o.name for o in workload.options()] == ["txn-length", "active-keys", "writes-per-key", "consistency"]
    [checker] = workload.checkers()
    assert isinstance(checker, TxnChecker) and checker.consistency == ["snapshot-isolation", "serializable"]
    assert ListAppendWorkload(config(extra={EXTRA_KEY: {"consistency": "strong-serializable"}})).settings.consistency \
        == ("strict-serializable",)
    txns = generate(workload, 300)
    assert max(len(t) for t in txns) == 2 and all(m[2] <= 4 for t in txns for m in t if m[0] == "append")
    for bad, message in [({"txn-lenght": 3}, "have no option txn-lenght; their options: txn-length"),
                         ({"active-keys": "many"}, "option active-keys takes an int, not 'many'"),
                         ({"writes-per-key": 0}, "option writes-per-key must be at least 1, not 0"),
                         ({"consistency": " , "}, "option consistency names no model"),
                         ({"consistency": "serialisable"}, "option consistency: unknown consistency model "
                                                           "'serialisable'")]:
        with pytest.raises(Refused, match=message) as refused:
            prepare(config(extra={EXTRA_KEY: bad}), system=FakeSystem(), backend=MemoryBackend())
        assert "\n" not in str(refused.value)


def test_the_serializable_fake_is_valid_and_snapshot_isolation_is_write_skew(tmp_path: Path) -> None:
    """The fast twin of tests/workloads/test_txn_cli.py: in process, without the recovery pause. With the default
    options ten workers' transactions contend: the serializable fake refuses some commits, and stays valid."""
    from checkers.txn import check_txn

    clean = run_fake(config(), tmp_path)
    txn = clean.results["checkers"]["txn"]
    assert txn["valid"] is True and txn["ok"] > 200 and txn["fail"] > 0.1 * txn["ok"], txn
    buggy = run_fake(config(bug=["snapshot-isolation"]), tmp_path)
    txn = buggy.results["checkers"]["txn"]
    assert buggy.valid is False and "G2-item" in txn["prohibited"], txn["anomaly_types"]
    ops = buggy.run.read_history()
    assert check_txn(ops, "list-append", ["snapshot-isolation"])["valid"] is True
    assert check_txn(ops, "list-append", ["serializable"])["anomaly_types"] == ["G2-item"]
