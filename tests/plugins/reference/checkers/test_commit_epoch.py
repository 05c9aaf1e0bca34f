"""The commit-epoch checker, on commit events leaders really logged.

The lines below come from ``fencepost test --workload register --nemesis kill --bug commit-prior-epoch
--time-limit 20 --interval 3 --seed 1``: after a leader was killed, the new leader n1 of tablet 3 (epoch 5)
moved its commit index onto an entry of epoch 3 as soon as a follower confirmed it. The same run without
the bug logged 549 leader commits, each on an entry of the leader's own epoch.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fencepost_reference.checkers.commit_epoch import CommitEpochChecker

from harness.checker_protocol import CheckContext

from .event_runs import one_node_run

START = 1795454258.5470502
DIRECT_TS = 1795454289.862299
DIRECT: dict[str, Any] = {"ts": DIRECT_TS, "node": "n1", "event": "commit", "tablet": 3, "epoch": 5, "commit": 278,
                          "entry": [3, 278], "leader": True}
OWN = {"ts": 1795454275.025905, "node": "n1", "event": "commit", "tablet": 3, "epoch": 3, "commit": 83,
       "entry": [3, 83], "leader": True}
FOLLOWER = {"ts": 1795454276.0, "node": "n1", "event": "commit", "tablet": 0, "epoch": 5, "commit": 30,
            "entry": [3, 30], "leader": False}


def run_dir(tmp_path: Path, events: list[dict[str, Any]]) -> Path:
    return one_node_run(tmp_path, events, START)


def test_a_leader_committing_an_earlier_epochs_entry_directly_is_caught(tmp_path: Path) -> None:
    result = CommitEpochChecker().check([], CheckContext(run_dir=run_dir(tmp_path, [OWN, FOLLOWER, DIRECT])))
    assert result["valid"] is False and result["leader_commits"] == 2
    (v,) = result["violations"]
    assert (v["node"], v["tablet"], v["epoch"], v["entry"]) == ("n1", 3, 5, [3, 278])
    assert "epoch 3" in v["explanation"]
    assert result["first_anomaly_s"] == round(DIRECT_TS - START, 3)


def test_own_epoch_and_follower_commits_pass_and_no_logs_is_unknown(tmp_path: Path) -> None:
    ok = CommitEpochChecker().check([], CheckContext(run_dir=run_dir(tmp_path, [OWN, FOLLOWER])))
    assert ok["valid"] is True and ok["leader_commits"] == 1
    assert CommitEpochChecker().check([], CheckContext(run_dir=tmp_path / "empty"))["valid"] == "unknown"
