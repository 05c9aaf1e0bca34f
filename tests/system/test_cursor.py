"""A leader's follow cursor against a real follower replica served over the real wire protocol."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from system.events import EventLog
from system.leader import LeaderRole
from system.replica import TabletReplica
from system.rules import NO_ENTRY, eid
from system.wire import RpcPool, RpcServer


async def _follower(tmp: Path, events: EventLog) -> tuple[TabletReplica, RpcServer, list[str]]:
    """A follower replica at epoch 1 behind an RPC server that records every request it answers."""
    replica = TabletReplica.create(0, str(tmp / "f"), "n2", events)
    replica.epoch = 1
    seen: list[str] = []

    async def handle(method: str, to: str | None, p: dict[str, Any]) -> Any:
        seen.append(method)
        if method == "add_entries":
            prev = eid(p["prev"]) if p.get("prev") is not None else None
            return await replica.add_entries(int(p["epoch"]), p["leader"], prev, list(p["entries"]),
                                             int(p["commit"]))
        return await replica.truncate(int(p["epoch"]), p["leader"], eid(p["point"]))

    server = RpcServer(handle)
    await server.start("127.0.0.1", 0)
    return replica, server, seen


async def _stop_as_a_write_arrives(tmp: Path) -> tuple[list[str], bool]:
    logs = [EventLog(str(tmp / "f-events.jsonl"), "n2"), EventLog(str(tmp / "l-events.jsonl"), "n1")]
    follower, server, seen = await _follower(tmp, logs[0])
    leader = TabletReplica.create(0, str(tmp / "l"), "n1", logs[1])
    leader.epoch = 1
    pool = RpcPool()
    addr = {"host": "127.0.0.1", "port": server.port, "uuid": None}
    role = LeaderRole(leader, ["n1", "n2"], {"n2": addr}, pool)
    try:
        role.start({"n2": NO_ENTRY})
        cursor = role.cursors["n2"]
        for _ in range(200):  # until the no-op is confirmed and the cursor idles, waiting to be woken
            await asyncio.sleep(0.01)
            if cursor.synced and cursor.confirmed == 0 and leader.commit == 0:
                break
        await asyncio.sleep(0.05)
        before = len(seen)
        # A write wakes the cursor in the same instant a reconfiguration stops it.
        cursor.wake.set()
        cursor.stop()
        await asyncio.sleep(0.3)
        return seen[before:], cursor.synced
    finally:
        role.stop("test over")
        await pool.close()
        await server.close()
        for r in (leader, follower):
            await r.close()
        for log in logs:
            log.close()


def test_a_stopped_cursor_sends_nothing_even_when_woken_as_it_stops(tmp_path: Path) -> None:
    after, synced = asyncio.run(_stop_as_a_write_arrives(tmp_path))
    assert after == [] and not synced, f"the stopped cursor went on: {after}"
