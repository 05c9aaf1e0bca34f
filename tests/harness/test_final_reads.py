"""Final reads: a final read that fails is tried again, so the checkers get the final state."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from harness import lifecycle
from harness.cluster_view import ClusterView
from harness.config import TestConfig
from harness.history.formats import load_history
from harness.history.op import FINAL_PROCESS_BASE
from harness.launch import prepare, run_test
from harness.protocols import Client, Invocation, Outcome, Workload
from harness.testing import FakeSystem, MemoryBackend
from tests.harness.refusing import RefusingClient


class LeaderlessAtFirst(FakeSystem):
    """The fake system, whose clients refuse the first two reads."""

    def __init__(self) -> None:
        super().__init__()
        self.refusals = 2

    def client(self, workload: Workload, cluster: ClusterView) -> Client:
        """A client whose reads fail definitely while refusals are left, as a member with no leader yet refuses."""
        return RefusingClient(super().client(workload, cluster), self.refuse)

    def refuse(self, op: Invocation) -> bool:
        """Spend a refusal on a read, while any are left (the count is shared by every client)."""
        if op.f == "read" and self.refusals > 0:
            self.refusals -= 1
            return True
        return False


def test_a_final_read_that_fails_is_tried_again(tmp_path: Path) -> None:
    system, backend = LeaderlessAtFirst(), MemoryBackend()
    config = TestConfig(workload="set", time_limit=2, nodes=3, seed=1, concurrency=2)
    outcome = run_test(config, tmp_path, prepared=prepare(config, system=system, backend=backend))
    finals = [op for op in outcome.run.read_history()
              if isinstance(op.process, int) and op.process >= FINAL_PROCESS_BASE and op.type.value != "invoke"]
    assert [op.type.value for op in finals][:3] == ["fail", "fail", "ok"]
    read_keys = {op.key for op in finals}
    assert read_keys and all(any(op.key == k and op.type.value == "ok" for op in finals) for k in read_keys), \
        "every set got an ok final read"
    result = outcome.results["checkers"]["set"]
    assert result["valid"] is True and result["counts"]["never-read"] == 0


class SilentAtTheEnd(FakeSystem):
    """The fake system, whose clients made after the workers' (the final reads') never learn an outcome."""

    def __init__(self, workers: int) -> None:
        super().__init__()
        self.workers, self.made = workers, 0

    def client(self, workload: Workload, cluster: ClusterView) -> Client:
        """The workers' clients as the fake system makes them; later ones answer every op ``info``."""
        self.made += 1
        inner = super().client(workload, cluster)
        return inner if self.made <= self.workers else SilentClient(inner)


class SilentClient(RefusingClient):
    """Every op times out (info), as on a cluster that never serves again."""

    def __init__(self, inner: Client) -> None:
        super().__init__(inner, lambda op: False)

    async def invoke(self, op: Invocation) -> Outcome:
        """Never an answer."""
        return Outcome("info", None, "timeout")


def test_a_final_op_past_the_patience_comes_from_a_new_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # In the default campaign at 50e9b37 (become-leader-before-followers, seed 2) the final reads ran out of
    # patience on a timed-out write, and the next final op came from the same process: the run's own
    # history.jsonl was then refused by `fencepost check` (a process invoking again after an info).
    monkeypatch.setattr(lifecycle, "FINAL_PATIENCE_S", 0.0)
    system, backend = SilentAtTheEnd(workers=2), MemoryBackend()
    config = TestConfig(workload="register", time_limit=2, nodes=3, seed=1, concurrency=2)
    outcome = run_test(config, tmp_path, prepared=prepare(config, system=system, backend=backend))
    finals = [op for op in load_history(outcome.run.path / "history.jsonl")  # strict: refuses a reused process
              if isinstance(op.process, int) and op.process >= FINAL_PROCESS_BASE]
    assert len({op.process for op in finals}) == len(finals) // 2 > 1


class SlowSilentClient(SilentClient):
    """Every op times out after a pause; ``in_flight`` holds how many are in flight now and at most."""

    def __init__(self, inner: Client, in_flight: list[int]) -> None:
        super().__init__(inner)
        self.in_flight = in_flight

    async def invoke(self, op: Invocation) -> Outcome:
        """No answer, after 0.1 s."""
        self.in_flight[0] += 1
        self.in_flight[1] = max(self.in_flight[1], self.in_flight[0])
        try:
            await asyncio.sleep(0.1)
        finally:
            self.in_flight[0] -= 1
        return Outcome("info", None, "timeout")


class SlowSilentAtTheEnd(SilentAtTheEnd):
    """As :class:`SilentAtTheEnd`, with final reads that each take 0.1 s to time out."""

    def __init__(self, workers: int) -> None:
        super().__init__(workers)
        self.in_flight = [0, 0]  # now, most at once

    def client(self, workload: Workload, cluster: ClusterView) -> Client:
        """The workers' clients as the fake system makes them; later ones slow and silent."""
        c = super().client(workload, cluster)
        return SlowSilentClient(c.inner, self.in_flight) if isinstance(c, SilentClient) else c


def test_final_reads_past_the_patience_are_tried_once_each_side_by_side(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # A mutant whose replicas never fsync (replica.py:AddNot:11, at bd7b643) left a cluster that served
    # nothing; its 50 final reads, tried one after another for 3 s each, ran past the mutant's deadline.
    monkeypatch.setattr(lifecycle, "FINAL_PATIENCE_S", 0.0)
    system, backend = SlowSilentAtTheEnd(workers=8), MemoryBackend()  # 8 workers, 4 a key: two keys
    config = TestConfig(workload="register", time_limit=2, nodes=3, seed=1, concurrency=8)
    prepared = prepare(config, system=system, backend=backend)
    outcome = run_test(config, tmp_path, prepared=prepared)
    finals = [op for op in load_history(outcome.run.path / "history.jsonl")
              if isinstance(op.process, int) and op.process >= FINAL_PROCESS_BASE]
    wanted = [(op.key, op.f) for op in prepared.workload.final_ops()]
    invoked = [(op.key, op.f) for op in finals if op.type.value == "invoke"]
    assert sorted(invoked) == sorted(wanted), "each tried once"
    for key in {k for k, _ in wanted}:  # one key's ops in the workload's order
        assert [f for k, f in invoked if k == key] == [f for k, f in wanted if k == key]
    assert len({op.process for op in finals}) == len(wanted) > 1
    assert system.in_flight[1] > 1, "the last tries ran one at a time"
