"""The log-matching checker, on real replicas' dumps: a follower joining a new leader as the system's truncation
rule says keeps a log that matches; one that keeps a dirty entry under the leader's later ones does not."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from fencepost_reference.checkers.log_matching import LogMatchingChecker, mismatch

from harness.checker_protocol import CheckContext
from system import rules
from system.events import EventLog
from system.replica import TabletReplica

OLD: list[dict[str, Any]] = [{"e": 1, "o": 0, "v": {"op": "noop"}},
                             {"e": 1, "o": 1, "v": {"op": "put", "key": "k", "value": 1}}]
DIRTY: dict[str, Any] = {"e": 1, "o": 2, "v": {"op": "put", "key": "k", "value": 2}}
"""Written by the epoch-1 leader on one follower only, never committed."""
NEW: list[dict[str, Any]] = [{"e": 2, "o": 2, "v": {"op": "noop"}},
                             {"e": 2, "o": 3, "v": {"op": "put", "key": "k", "value": 3}}]
"""The epoch-2 leader's entries after the shared prefix."""


def dumps(tmp_path: Path, follower_keeps: int) -> dict[str, Any]:
    """Real replicas' dumps: the leader's log OLD + NEW, committed through 3; a follower that held OLD + DIRTY,
    kept ``follower_keeps`` of its entries on joining, then appended the leader's entries after those."""
    events = EventLog(str(tmp_path / "events.jsonl"), "n1")

    async def go() -> dict[str, Any]:
        leader = TabletReplica.create(0, str(tmp_path / "leader"), "n1", events)
        leader.append_local([*OLD, *NEW])
        await leader.wait_durable(3)
        leader.advance_commit(3)
        follower = TabletReplica.create(0, str(tmp_path / "follower"), "n2", events)
        kept = [*OLD, DIRTY][:follower_keeps]
        follower.append_local([*kept, *[e for e in NEW if e["o"] >= len(kept)]])
        await follower.wait_durable(3)
        follower.advance_commit(1)
        out = {"n1": leader.dump(), "n2": follower.dump()}
        for r in (leader, follower):
            await r.close()
        return out

    try:
        return asyncio.run(go())
    finally:
        events.close()


def check(tmp_path: Path, states: dict[str, Any]) -> dict[str, Any]:
    for node, state in states.items():
        (tmp_path / "run" / "nodes" / node).mkdir(parents=True)
        (tmp_path / "run" / "nodes" / node / "dump.json").write_text(json.dumps({"tablets": {"0": state}}))
    return LogMatchingChecker().check([], CheckContext(run_dir=tmp_path / "run"))


def test_a_follower_that_truncates_as_the_rule_says_matches_its_leader(tmp_path: Path) -> None:
    point = rules.truncation_point([e["e"] for e in [*OLD, *NEW]], (DIRTY["e"], DIRTY["o"]))
    assert point == (1, 1)
    keep = rules.kept_prefix([(e["e"], e["o"]) for e in [*OLD, DIRTY]], point)
    result = check(tmp_path, dumps(tmp_path, keep))
    assert result["valid"] is True, result


def test_a_follower_that_keeps_a_dirty_entry_under_the_leaders_later_ones_is_invalid(tmp_path: Path) -> None:
    # What the mutant `rules.py:ReplaceComparisonOperator_LtE_GtE:0` computes: the follower's own head.
    result = check(tmp_path, dumps(tmp_path, 3))
    assert result["valid"] is False
    (v,) = result["violations"]
    assert (v["nodes"], v["offset"], v["proof"], v["rule"]) == (["n1", "n2"], 2, 3, "log matching")


def test_replicas_that_committed_different_entries_break_committed_agreement() -> None:
    a, b = [*OLD, DIRTY], [*OLD, NEW[0]]
    assert mismatch(a, 2, b, 2) == (2, 2, "committed agreement")
    assert mismatch(a, 2, b, 1) is None  # b never committed offset 2, and no later entry is shared
    assert mismatch(a, 1, a[:2], 1) is None  # a prefix matches


def test_replicas_not_serving_their_log_are_left_out(tmp_path: Path) -> None:
    states = dumps(tmp_path, 3)
    states["n2"] = {**states["n2"], "status": "damaged"}
    assert check(tmp_path, states)["valid"] is True
