"""The replica-state checker: a replica's commit index lies within its own log, on real replicas' dumps."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from fencepost_reference.checkers.replica_state import ReplicaStateChecker

from harness.checker_protocol import CheckContext
from system.events import EventLog
from system.replica import TabletReplica


def write_dumps(run: Path, dumps: dict[str, dict[str, Any]]) -> None:
    for node, tablets in dumps.items():
        (run / "nodes" / node).mkdir(parents=True)
        (run / "nodes" / node / "dump.json").write_text(json.dumps({"tablets": tablets}))


def real_dumps(tmp_path: Path) -> dict[str, Any]:
    """Two real replicas' dumps: one with three entries, two committed; one tombstoned after committing."""
    events = EventLog(str(tmp_path / "events.jsonl"), "n1")

    async def go() -> dict[str, Any]:
        out = {}
        for t, delete in ((0, False), (1, True)):
            r = TabletReplica.create(t, str(tmp_path / "tablets" / str(t)), "n1", events)
            r.append_local([{"e": 1, "o": o, "v": {"op": "noop"}} for o in range(3)])
            await r.wait_durable(2)
            r.advance_commit(1)
            if delete:
                await r.delete(2)
            out[str(t)] = r.dump()
            await r.close()
        return out

    try:
        return asyncio.run(go())
    finally:
        events.close()


def test_real_replicas_commit_within_their_logs(tmp_path: Path) -> None:
    tablets = real_dumps(tmp_path)
    assert (tablets["0"]["head"], tablets["0"]["commit"]) == ([1, 2], 1)
    assert (tablets["1"]["status"], tablets["1"]["head"], tablets["1"]["commit"]) == ("deleted", None, -1)
    write_dumps(tmp_path / "run", {"n1": tablets})
    result = ReplicaStateChecker().check([], CheckContext(run_dir=tmp_path / "run"))
    assert result["valid"] is True and result["replicas"] == 2


def test_a_commit_index_beyond_the_log_is_invalid(tmp_path: Path) -> None:
    tablets = real_dumps(tmp_path)
    ahead = {**tablets["0"], "commit": 3}  # one past its last entry
    tombstone = {**tablets["1"], "commit": False}  # a tombstone's commit reset to `not 1` (a mutant of delete)
    write_dumps(tmp_path / "run", {"n1": {"0": ahead}, "n2": {"1": tombstone, "2": tablets["0"]}})
    result = ReplicaStateChecker().check([], CheckContext(run_dir=tmp_path / "run"))
    assert result["valid"] is False and [(v["node"], v["tablet"]) for v in result["violations"]] == [
        ("n1", "0"), ("n2", "1")]
    assert "n1's replica of tablet 0 (fenced) has commit index 3, but its log ends at offset 2" in \
        result["explanation"]
    assert "has commit index False, but its log ends at offset -1" in result["explanation"]


def test_no_dumps_is_unknown(tmp_path: Path) -> None:
    assert ReplicaStateChecker().check([], CheckContext(run_dir=tmp_path))["valid"] == "unknown"
