"""The register workload: its ops, and its final operations after the heal."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import harness.lifecycle
from harness.cluster_view import ClusterView
from harness.config import TestConfig
from harness.history.op import FINAL_PROCESS_BASE
from harness.launch import prepare, run_test
from harness.protocols import Client, Invocation, Outcome, Workload
from harness.testing import FakeSystem, MemoryBackend
from tests.harness.refusing import RefusingClient
from workloads.register import RegisterWorkload


def test_final_ops_read_each_key_in_use_then_write_it_a_new_value_and_read_it_again() -> None:
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
    assert [(op.f, op.key) for op in final] == [(f, k) for k in keys for f in ("read", "write", "read")]
    for write in final[1::3]:
        assert write.value not in written.get(write.key, set())  # unique on its key, as every write is


class ForgetsOnHeal(FakeSystem):
    """The fake system, which loses each key's last acknowledged value when the cluster heals: the first
    client made after every worker's client has closed (the final phase's) finds each key one value back."""

    def __init__(self) -> None:
        super().__init__()
        self.open_clients = 0
        self.forgot = 0

    def client(self, workload: Workload, cluster: ClusterView) -> Client:
        """A client that counts itself; the final phase's first one rolls every key back by one value."""
        store = self._store()
        if self.open_clients == 0 and store.data and not self.forgot:
            for values in store.data.values():
                if len(values) > 1:
                    values.pop()
                    self.forgot += 1
        self.open_clients += 1
        return CountedClient(super().client(workload, cluster), self)


class CountedClient(RefusingClient):
    """A client of :class:`ForgetsOnHeal` that refuses nothing and tells the system when it closes."""

    def __init__(self, inner: Client, system: ForgetsOnHeal) -> None:
        super().__init__(inner, lambda op: False)
        self.system = system

    async def close(self) -> None:
        """Count the client closed, then close the wrapped one."""
        self.system.open_clients -= 1
        await super().close()


def test_an_acknowledged_write_lost_at_the_heal_shows_in_the_final_read(tmp_path: Path) -> None:
    system = ForgetsOnHeal()
    config = TestConfig(workload="register", time_limit=2, nodes=3, seed=1, concurrency=4)
    outcome = run_test(config, tmp_path, prepared=prepare(config, system=system, backend=MemoryBackend()))
    assert system.forgot > 0
    linearizable = outcome.results["checkers"]["linearizable"]
    assert linearizable["valid"] is False, "the final write hid the lost one"


class StopsCommittingWrites(FakeSystem):
    """The fake system, whose clients refuse every write: reads are served, writes never commit."""

    def client(self, workload: Workload, cluster: ClusterView) -> Client:
        """A client that refuses writes and passes the rest on."""
        return RefusingClient(super().client(workload, cluster), lambda op: op.f in ("write", "cas"))


def test_a_cluster_that_serves_reads_but_commits_no_write_has_not_recovered(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(harness.lifecycle, "FINAL_PATIENCE_S", 2.0)  # the final write's retries, cut short
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
    reads = {op.key: op.value for op in finals if op.f == "read"}  # the last read of each key
    writes = {op.key: op.value for op in finals if op.f == "write"}
    assert reads and reads == writes  # each key's last read sees its final write: nothing ran after it


class OneShardStuck(FakeSystem):
    """The fake system, whose key 0 lives on a shard without a leader: every op on it is refused."""

    def client(self, workload: Workload, cluster: ClusterView) -> Client:
        """A client that refuses key 0 and passes the rest on."""
        return RefusingClient(super().client(workload, cluster), lambda op: op.key == 0)


def test_a_group_on_a_stuck_key_sets_it_aside_works_elsewhere_and_reads_it_at_the_end(tmp_path: Path) -> None:
    config = TestConfig(workload="register", time_limit=2, nodes=3, seed=1, concurrency=4)
    outcome = run_test(config, tmp_path, prepared=prepare(config, system=OneShardStuck(), backend=MemoryBackend()))
    main = [op for op in outcome.run.read_history()
            if isinstance(op.process, int) and op.process < FINAL_PROCESS_BASE and op.type.value != "invoke"]
    first_ok = next(i for i, op in enumerate(main) if op.type.value == "ok")
    on_stuck = [op for op in main[:first_ok] if op.key == 0]
    assert len(on_stuck) < 10, "the group spent its key's every op on the stuck shard first"
    assert any(op.key == 0 for op in main[first_ok:]), "the stuck key was taken up again"
    finals = [op for op in outcome.run.read_history()
              if isinstance(op.process, int) and op.process >= FINAL_PROCESS_BASE and op.type.value == "invoke"]
    assert 0 in {op.key for op in finals}


def test_only_a_refused_read_or_write_is_a_sign_of_a_stuck_key() -> None:
    from workloads.register import stuck

    assert not stuck(Invocation("cas", 0, [1, 2]), Outcome("fail", None, "cas_mismatch"))
    assert stuck(Invocation("write", 0, 2), Outcome("fail", None, "no leader"))
    assert not stuck(Invocation("read", 0), Outcome("info", None, "timeout"))  # a cut-off leader's window
    assert not stuck(Invocation("read", 0), Outcome("ok", 3))
