"""The topology-guards checker, on node events from real runs of the cancelled-copy fault.

``fencepost test --nemesis cancelled-copy --nodes 4 --seed 2 --bug stale-copy-session``: n3 applied the copy
of session 2 after a barrier had closed every session below 3. Without the bug the same copy failed with
``stale_session``, and a later copy under an open session is fine.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fencepost_reference.checkers.topology_guards import TopologyGuardsChecker

from harness.checker_protocol import CheckContext

from .event_runs import one_node_run

START = 1795434971.9225016
STARTED = {"ts": 1795434972.377524, "node": "n3", "event": "node_started", "uuid": "7948333a", "member": "n3"}


def closed(ts: float, below: int) -> dict[str, Any]:
    return {"ts": ts, "node": "n3", "event": "sessions_closed", "tablet": 3, "below": below}


def copy_done(ts: float, session: int) -> dict[str, Any]:
    return {"ts": ts, "node": "n3", "event": "copy_done", "tablet": 3, "session": session, "epoch": 1}


def check(tmp_path: Path, events: list[dict[str, Any]]) -> dict[str, Any]:
    return TopologyGuardsChecker().check([], CheckContext(run_dir=one_node_run(tmp_path, events, START, "n3")))


def test_a_copy_applied_after_its_session_was_closed_is_caught(tmp_path: Path) -> None:
    result = check(tmp_path, [STARTED, closed(1795435005.705795, 1), closed(1795435006.210139, 2),
                              closed(1795435006.965117, 3), copy_done(1795435008.038161, 2)])
    assert result["valid"] is False and result["copies"] == 1
    (v,) = result["violations"]
    assert (v["node"], v["tablet"], v["session"], v["closed_below"]) == ("n3", 3, 2, 3)
    assert result["first_anomaly_s"] == round(1795435008.038161 - START, 3)


def test_copies_under_open_sessions_pass_and_a_wiped_node_starts_afresh(tmp_path: Path) -> None:
    wiped = {**STARTED, "ts": 1795435007.0, "uuid": "0b1c"}
    result = check(tmp_path, [STARTED, closed(1795435006.2, 2), copy_done(1795435006.5, 2),
                              closed(1795435006.9, 3), wiped, copy_done(1795435008.0, 2)])
    assert result["valid"] is True and result["copies"] == 2
