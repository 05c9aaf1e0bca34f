"""The rw-register workload: the same key pool and options as list-append, with register writes, and runs on the
fake transactional store."""

from __future__ import annotations

import json
import random
from pathlib import Path

from harness.config import TestConfig
from harness.registry import load_workload
from harness.testing import run_fake
from workloads.rw_register import RwRegisterWorkload
from workloads.txn_keys import EXTRA_KEY


def config(**fields: object) -> TestConfig:
    base: dict[str, object] = {"system": "fake", "workload": "rw-register", "time_limit": 1.5, "rate": 0.0,
                               "concurrency": 10, "recovery": 0.0, "seed": 5}
    return TestConfig(**{**base, **fields})  # type: ignore[arg-type]


def test_transactions_write_and_read_registers_with_values_unique_per_key() -> None:
    workload = load_workload("rw-register", config(extra={EXTRA_KEY: {"txn-length": 3}}))
    assert isinstance(workload, RwRegisterWorkload) and workload.functions == frozenset({"txn"})
    source = workload.generator(random.Random(2), 4)
    txns = [source.next_op(0) for _ in range(2000)]
    assert {op.f for op in txns} == {"txn"} and {len(op.value) for op in txns} == {1, 2, 3}
    writes: dict[object, list[object]] = {}
    for op in txns:
        for f, k, v in op.value:
            assert f in ("w", "r") and (v is None) == (f == "r")
            if f == "w":
                writes.setdefault(k, []).append(v)
    assert all(values == list(range(1, len(values) + 1)) and len(values) <= 16 for values in writes.values())
    read = {m[1] for op in workload.final_ops() for m in op.value}
    assert read >= set(writes)


def test_the_serializable_fake_commits_some_and_refuses_some_and_reads_come_back_filled_in(tmp_path: Path) -> None:
    outcome = run_fake(config(), tmp_path)
    ops = [json.loads(line) for line in outcome.run.history_path.read_text().splitlines()]
    done = [op for op in ops if op["f"] == "txn" and op["type"] != "invoke"]
    ok = [op for op in done if op["type"] == "ok"]
    assert len(ok) > 200 and any(op["type"] == "fail" for op in done)
    assert any(m[0] == "r" and m[2] is not None for op in ok for m in op["value"])  # reads saw writes
    assert outcome.results["checkers"]["txn"]["valid"] is True, outcome.results["checkers"]["txn"]


def test_the_snapshot_isolation_fake_is_caught_as_write_skew_from_registers_too(tmp_path: Path) -> None:
    """A register's version order is only what the history proves; write skew still shows, within seconds."""
    from checkers.txn import check_txn

    outcome = run_fake(config(bug=["snapshot-isolation"]), tmp_path)
    txn = outcome.results["checkers"]["txn"]
    assert outcome.valid is False and "G2-item" in txn["prohibited"], txn["anomaly_types"]
    assert check_txn(outcome.run.read_history(), "rw-register", ["snapshot-isolation"])["valid"] is True
