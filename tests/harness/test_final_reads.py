"""Final reads: a final read that fails is tried again, so the checkers get the final state."""

from __future__ import annotations

from pathlib import Path

from harness.cluster import Cluster
from harness.config import TestConfig
from harness.history.op import FINAL_PROCESS_BASE
from harness.protocols import Client, Invocation, Outcome, Workload
from harness.run import prepare, run_test
from harness.testing import FakeSystem, MemoryBackend


class RefusesFirstReads:
    """A set client whose first ``refusals`` reads fail definitely, as a member with no leader yet refuses."""

    def __init__(self, inner: Client, refusals: list[int]) -> None:
        self.inner, self.refusals = inner, refusals

    async def open(self, cluster: Cluster) -> None:
        """Open the wrapped client."""
        await self.inner.open(cluster)

    async def invoke(self, op: Invocation) -> Outcome:
        """Fail a read while refusals are left, else pass the operation on."""
        if op.f == "read" and self.refusals[0] > 0:
            self.refusals[0] -= 1
            return Outcome("fail", None, "no leader")
        return await self.inner.invoke(op)

    async def close(self) -> None:
        """Close the wrapped client."""
        await self.inner.close()


class LeaderlessAtFirst(FakeSystem):
    """The fake system, whose clients refuse the first two reads."""

    def __init__(self) -> None:
        super().__init__()
        self.refusals = [2]

    def client(self, workload: Workload, cluster: Cluster) -> Client:
        """A refusing client."""
        return RefusesFirstReads(super().client(workload, cluster), self.refusals)


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
