"""A leader's follow cursor against a real follower replica served over the real wire protocol."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from system.events import EventLog, read_events
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


async def _tear_down(role: LeaderRole, pool: RpcPool, server: RpcServer, replicas: list[TabletReplica],
                     logs: list[EventLog]) -> None:
    role.stop("test over")
    await pool.close()
    await server.close()
    for r in replicas:
        await r.close()
    for log in logs:
        log.close()


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
        await _tear_down(role, pool, server, [leader, follower], logs)


def test_a_stopped_cursor_sends_nothing_even_when_woken_as_it_stops(tmp_path: Path) -> None:
    after, synced = asyncio.run(_stop_as_a_write_arrives(tmp_path))
    assert after == [] and not synced, f"the stopped cursor went on: {after}"


async def _stream_through_a_lossy_link(tmp: Path, bug: bool) -> tuple[int, int, int, int]:
    """Stream 60 writes to a follower through a proxy that loses every fifth batch; return the most the
    leader counted as confirmed above the follower's real head, the batches lost, and both final heads."""
    from fencepost_reference.faults.lossy_proxy import LossyProxy

    from system import bugs

    bugs.configure(["gap-ack"] if bug else [])
    logs = [EventLog(str(tmp / "f-events.jsonl"), "n2"), EventLog(str(tmp / "l-events.jsonl"), "n1")]
    follower, server, _ = await _follower(tmp, logs[0])
    batches = 0

    def lose_every_fifth(msg: dict[str, Any]) -> bool:
        nonlocal batches
        if msg.get("method") != "add_entries" or not msg["params"].get("entries"):
            return False
        batches += 1
        return batches % 5 == 0

    proxy = LossyProxy(("127.0.0.1", server.port), lose_every_fifth)
    port = await proxy.start()
    leader = TabletReplica.create(0, str(tmp / "l"), "n1", logs[1])
    leader.epoch = 1
    pool = RpcPool()
    role = LeaderRole(leader, ["n1", "n2"], {"n2": {"host": "127.0.0.1", "port": port, "uuid": None}}, pool)
    overclaim = 0
    try:
        role.start({"n2": NO_ENTRY})
        cursor = role.cursors["n2"]
        for i in range(60):
            role.append({"f": "put", "k": "x", "v": i})
            await asyncio.sleep(0.01)
            if cursor.synced:
                overclaim = max(overclaim, cursor.confirmed - follower.head[1])
        for _ in range(300):  # until the follower holds the whole log (a lost batch costs one sync)
            if cursor.synced:
                overclaim = max(overclaim, cursor.confirmed - follower.head[1])
            if follower.head == leader.head:
                break
            await asyncio.sleep(0.02)
        return overclaim, proxy.dropped, follower.head[1], leader.head[1]
    finally:
        bugs.configure([])
        await proxy.close()
        await _tear_down(role, pool, server, [leader, follower], logs)


def test_a_batch_lost_on_the_way_is_refused_and_resent(tmp_path: Path) -> None:
    overclaim, dropped, follower_head, leader_head = asyncio.run(_stream_through_a_lossy_link(tmp_path, False))
    assert dropped > 0
    assert overclaim <= 0, f"the leader counted {overclaim} entries the follower did not hold"
    assert follower_head == leader_head


def test_under_gap_ack_the_leader_counts_entries_the_follower_lacks(tmp_path: Path) -> None:
    overclaim, dropped, _, _ = asyncio.run(_stream_through_a_lossy_link(tmp_path, True))
    assert dropped > 0 and overclaim > 0


async def _sync_from_a_stale_head(tmp: Path) -> tuple[list[str], list[str]]:
    """A follower holding six committed entries of epoch 1, and a new leader (epoch 2) whose cursor for it
    starts from a head reported earlier, (1, 2): what the follower was asked, and what it refused."""
    logs = [EventLog(str(tmp / "f-events.jsonl"), "n2"), EventLog(str(tmp / "l-events.jsonl"), "n1")]
    follower, server, seen = await _follower(tmp, logs[0])
    entries = [{"e": 1, "o": o, "v": {"op": "noop"}} for o in range(6)]
    await follower.add_entries(1, "n1", NO_ENTRY, entries, 5)
    leader = TabletReplica.create(0, str(tmp / "l"), "n1", logs[1])
    leader.append_local(entries)
    await leader.wait_durable(5)
    leader.epoch = 2
    pool = RpcPool()
    addr = {"host": "127.0.0.1", "port": server.port, "uuid": None}
    role = LeaderRole(leader, ["n1", "n2"], {"n2": addr}, pool)
    try:
        role.start({"n2": (1, 2)})
        cursor = role.cursors["n2"]
        for _ in range(300):
            await asyncio.sleep(0.01)
            if cursor.synced and cursor.confirmed == 6:
                break
        assert cursor.synced and cursor.confirmed == 6 and follower.commit >= 5
        refused = [e["event"] for e in read_events(str(tmp / "f-events.jsonl")) if e["event"] == "truncate_refused"]
        return seen, refused
    finally:
        await _tear_down(role, pool, server, [follower, leader], logs)


def test_a_cursor_never_truncates_from_a_head_reported_earlier(tmp_path: Path) -> None:
    # The clean default campaign at seed 1 (c5a7903): the operator re-added n4 with the head it had
    # reported, [6, 172]; batches of the cursor this replaced still landed, taking n4 to commit 185, and the
    # new cursor then asked n4 to truncate to [6, 172], below its commit: refused, and reported by the
    # leader-completeness checker as a leader asking to drop committed entries. A reported head now only
    # saves the probe when no truncation follows from it.
    seen, refused = asyncio.run(_sync_from_a_stale_head(tmp_path))
    assert refused == [], seen
    assert seen[0] == "add_entries", seen  # the probe, before any truncate
