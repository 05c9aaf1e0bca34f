"""The leader-completeness checker, on an election that really went wrong.

From ``fencepost matrix --bug leader-not-highest-head --seeds 10`` (seed 3): n3 lagged with head 150,
n1 and n2 held 350 (n2 had committed all of it), and the election picked n3; the followers refused to
truncate below their commit index, so no acknowledged append was lost, but the election was wrong.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fencepost_reference.checkers.leader_completeness import LeaderCompletenessChecker

from harness.checker_protocol import CheckContext

from .event_runs import node_runs

START = 1795437117.3911052
FENCED = [{"ts": 1795437123.391731, "node": "n1", "event": "fenced", "tablet": 0, "epoch": 2, "head": [1, 350],
           "commit": 308},
          {"ts": 1795437123.392741, "node": "n2", "event": "fenced", "tablet": 0, "epoch": 2, "head": [1, 350],
           "commit": 350},
          {"ts": 1795437123.391993, "node": "n3", "event": "fenced", "tablet": 0, "epoch": 2, "head": [1, 150],
           "commit": 150}]
LEAD_TS = 1795437123.394218
LAGGARD_LEADS: dict[str, Any] = {"ts": LEAD_TS, "node": "n3", "event": "became_leader", "tablet": 0, "epoch": 2,
                 "head": [1, 150], "followers": {"n1": [1, 350]}, "ensemble": ["n1", "n2", "n3"]}
REFUSED = {"ts": 1795437123.396908, "node": "n1", "event": "truncate_refused", "tablet": 0, "point": [1, 150],
           "commit": 308}


def check(tmp_path: Path, events: list[dict[str, Any]]) -> dict[str, Any]:
    return LeaderCompletenessChecker().check([], CheckContext(run_dir=node_runs(tmp_path, events, START)))


def test_a_leader_without_the_committed_entries_is_caught(tmp_path: Path) -> None:
    result = check(tmp_path, [*FENCED, LAGGARD_LEADS, REFUSED])
    assert result["valid"] is False and result["elections"] == 1
    became, refused = result["violations"]
    assert became["behind"] == {"n1": 308, "n2": 350} and became["head"] == [1, 150]
    assert refused["node"] == "n1" and refused["commit"] == 308
    assert result["first_anomaly_s"] == round(LEAD_TS - START, 3)


def test_the_highest_head_winning_is_valid(tmp_path: Path) -> None:
    good = {**LAGGARD_LEADS, "node": "n2", "head": [1, 350]}
    result = check(tmp_path, [*FENCED, good])
    assert result["valid"] is True and result["elections"] == 1
