"""The register workload: its ops, and its final operations after the heal."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import harness.runtime
from harness.cluster import Cluster
from harness.config import TestConfig
from harness.history.op import FINAL_PROCESS_BASE
from harness.protocols import Client, Workload
from harness.run import prepare, run_test
from harness.testing import FakeSystem, MemoryBackend
from tests.harness.refusing import RefusingClient
from workloads.register import RegisterWorkload


def test_final_ops_write_each_key_in_use_a_new_value_then_read_it() -> None:
    workload = RegisterWorkload(TestConfig(workload="register"))
    source = workload.generator(random.Random(3), concurrency=8)
    written: dict[object, set[object]] = {}
    for i in range(500):
        op = source.next_op(i % 8)
        assert op is not None  # the register's keys never run dry
        if op.f == "write":
            written.setdefault(op.key, set()).add(op.value)
        elif op.f == "cas":
            written.setdefault(op.key, set()).add(op.value[1])
    final = workload.final_ops()
    keys = list(source.issued())  # type: ignore[attr-defined]
    assert [(op.f, op.key) for op in final] == [(f, k) for k in keys for f in ("write", "read")]
    for write in final[::2]:
        assert write.value not in written.get(write.key, set())  # unique on its key, as every write is


class StopsCommittingWrites(FakeSystem):
    """The fake system, whose clients refuse every write: reads are served, writes never commit."""

    def client(self, workload: Workload, cluster: Cluster) -> Client:
        """A client that refuses writes and passes the rest on."""
        return RefusingClient(super().client(workload, cluster), lambda op: op.f in ("write", "cas"))


def test_a_cluster_that_serves_reads_but_commits_no_write_has_not_recovered(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(harness.runtime, "FINAL_PATIENCE_S", 2.0)  # the final write's retries, cut short
    config = TestConfig(workload="register", time_limit=2, nodes=3, seed=1, concurrency=4)
    outcome = run_test(config, tmp_path, prepared=prepare(config, system=StopsCommittingWrites(),
                                                           backend=MemoryBackend()))
    finals = [op for op in outcome.run.read_history()
              if isinstance(op.process, int) and op.process >= FINAL_PROCESS_BASE and op.type.value != "invoke"]
    assert {op.f for op in finals} == {"write", "read"}
    assert all(op.type.value == "ok" for op in finals if op.f == "read")
    recovery = outcome.results["checkers"]["recovery"]
    assert recovery["valid"] is False and recovery["examples"][0]["read"].startswith("write ")
    assert "never succeeded" in recovery["explanation"]


def test_final_write_and_read_on_a_healthy_cluster(tmp_path: Path) -> None:
    config = TestConfig(workload="register", time_limit=2, nodes=3, seed=2, concurrency=4)
    outcome = run_test(config, tmp_path, prepared=prepare(config, system=FakeSystem(), backend=MemoryBackend()))
    results = outcome.results["checkers"]
    assert results["recovery"]["valid"] is True and results["linearizable"]["valid"] is True
    finals = [op for op in outcome.run.read_history() if isinstance(op.process, int)
              and op.process >= FINAL_PROCESS_BASE and op.type.value == "ok"]
    reads = {op.key: op.value for op in finals if op.f == "read"}
    writes = {op.key: op.value for op in finals if op.f == "write"}
    assert reads and reads == writes  # each final read sees its final write: nothing ran after it
