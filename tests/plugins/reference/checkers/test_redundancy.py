"""The redundancy checker, on contract events a leader really logged.

The lines below come from ``fencepost test --bug contract-below-commit --seed 1`` (unsafe: the staying
follower n2 had confirmed 81 of 113 committed entries) and from the same run without the bug.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fencepost_reference.checkers.redundancy import RedundancyChecker

from harness.checker_protocol import CheckContext

from .event_runs import one_node_run

START = 1795434422.9438071
UNSAFE_TS = 1795434428.481963
UNSAFE: dict[str, Any] = {"ts": UNSAFE_TS, "node": "n1", "event": "reconfig_committed", "tablet": 3, "epoch": 2,
          "op": "contract", "old": "n3", "new": None, "ensemble": ["n1", "n2"], "commit": 113,
          "remaining_confirmed": {"n1": 114, "n2": 81}}
SAFE = {"ts": 1795434430.0, "node": "n2", "event": "reconfig_committed", "tablet": 3, "epoch": 4, "op": "contract",
        "old": "n1", "new": None, "ensemble": ["n2", "n3"], "commit": 69, "remaining_confirmed": {"n2": 70, "n3": 69}}


def run_dir(tmp_path: Path, events: list[dict[str, Any]]) -> Path:
    return one_node_run(tmp_path, events, START)


def test_a_contract_that_leaves_the_commit_index_on_the_leader_alone_is_caught(tmp_path: Path) -> None:
    result = RedundancyChecker().check([], CheckContext(run_dir=run_dir(tmp_path, [SAFE, UNSAFE])))
    assert result["valid"] is False and result["contracts"] == 2
    (v,) = result["violations"]
    assert (v["tablet"], v["removed"], v["commit"], v["holders"], v["needed"]) == (3, "n3", 113, ["n1"], 2)
    assert "n2: 81" in v["explanation"]
    assert result["first_anomaly_s"] == round(UNSAFE_TS - START, 3)


def test_safe_contracts_pass_and_no_logs_is_unknown(tmp_path: Path) -> None:
    assert RedundancyChecker().check([], CheckContext(run_dir=run_dir(tmp_path, [SAFE])))["valid"] is True
    assert RedundancyChecker().check([], CheckContext(run_dir=tmp_path / "empty"))["valid"] == "unknown"
