"""The recovery checker: after the heal, every final read succeeds at some attempt."""

from __future__ import annotations

from pathlib import Path

import pytest

from checkers.recovery import RecoveryChecker
from harness.checker_protocol import CheckContext
from harness.cluster_view import ClusterView
from harness.config import TestConfig
from harness.history.op import FINAL_PROCESS_BASE, Op
from harness.launch import prepare, run_test
from harness.protocols import Client, Workload
from harness.testing import FakeSystem, MemoryBackend
from tests.checkers.histories import sequential
from tests.harness.refusing import RefusingClient

CTX = CheckContext()
F = FINAL_PROCESS_BASE


def test_final_reads_that_succeed_at_last_are_a_recovery() -> None:
    h = sequential((0, "write", "k", 1, "ok", 1), (F, "read", "k", None, "fail", None),
                   (F + 1, "read", "k", None, "info", None), (F + 2, "read", "k", None, "ok", 1))
    r = RecoveryChecker().check(h, CTX)
    assert r["valid"] is True and r["final_reads"] == 1


def test_a_final_read_that_never_succeeds_is_a_cluster_that_did_not_recover() -> None:
    h: list[Op] = sequential((0, "write", "k", 1, "ok", 1), (F, "read", "k", None, "ok", 1),
                             (F, "read", "j", None, "fail", None), (F + 1, "read", "j", None, "info", None))
    r = RecoveryChecker().check(h, CTX)
    assert r["valid"] is False and r["stuck"] == 1 and r["examples"][0]["outcomes"] == ["fail", "info"]
    assert "did not recover" in r["explanation"] and "'j'" in r["explanation"]


def test_no_final_reads_leaves_nothing_to_judge() -> None:
    assert RecoveryChecker().check(sequential((0, "read", "k", None, "ok", None)), CTX)["valid"] is True


class StuckAfterFaults(FakeSystem):
    """The fake system, whose clients made after the main phase get no answer."""

    def __init__(self) -> None:
        super().__init__()
        self.made = 0
        self.over = False

    def client(self, workload: Workload, cluster: ClusterView) -> Client:
        """The workers' clients work; the final phase's (the client made after them) is refused."""
        self.made += 1
        if self.made > 2:
            self.over = True
        # The system stops answering once the workload is over, as a commit index that never moves.
        return RefusingClient(super().client(workload, cluster), lambda op: self.over)


def test_a_run_whose_system_never_serves_again_is_invalid(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("harness.lifecycle.FINAL_PATIENCE_S", 2.0)
    system, backend = StuckAfterFaults(), MemoryBackend()
    config = TestConfig(workload="register", time_limit=2, nodes=3, seed=1, concurrency=2)
    outcome = run_test(config, tmp_path, prepared=prepare(config, system=system, backend=backend))
    result = outcome.results["checkers"]["recovery"]
    assert result["valid"] is False and outcome.results["valid"] is False, result
    assert outcome.results["checkers"]["linearizable"]["valid"] is True, "no black-box checker sees it"
