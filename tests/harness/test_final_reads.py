"""Final reads: a final read that fails is tried again, so the checkers get the final state."""

from __future__ import annotations

from pathlib import Path

from harness.cluster import Cluster
from harness.config import TestConfig
from harness.history.op import FINAL_PROCESS_BASE
from harness.protocols import Client, Invocation, Workload
from harness.run import prepare, run_test
from harness.testing import FakeSystem, MemoryBackend
from tests.harness.refusing import RefusingClient


class LeaderlessAtFirst(FakeSystem):
    """The fake system, whose clients refuse the first two reads."""

    def __init__(self) -> None:
        super().__init__()
        self.refusals = 2

    def client(self, workload: Workload, cluster: Cluster) -> Client:
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
