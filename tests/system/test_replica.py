"""A replica being filled by a tablet copy adopts newer epochs durably, as a tombstone does, and refuses."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from system import statefile
from system.events import EventLog, read_events
from system.replica import TabletReplica
from system.rules import COPYING
from system.wire import RpcError


def _copying(tmp: Path, events: EventLog) -> TabletReplica:
    """A replica as StartTabletCopy leaves a new tablet: empty consensus metadata, status copying."""
    d = tmp / "tablets" / "0"
    d.mkdir(parents=True)
    statefile.write_consensus_meta(str(d / "state.json"),
                                   {"epoch": -1, "status": "deleted", "leader": None, "head": None, "commit": -1})
    r = TabletReplica(0, str(d), "n4", events)
    r.status, r.data_state, r.session = "copying", COPYING, 2
    return r


def _disk_epoch(r: TabletReplica) -> int:
    return int((statefile.read_json(os.path.join(r.dir, "state.json")) or {})["epoch"])


async def _refused(call: Any) -> RpcError:
    with pytest.raises(RpcError) as got:
        await call
    return got.value


def test_a_copying_replica_adopts_each_newer_epoch_durably_and_still_refuses(tmp_path: Path) -> None:
    async def scenario() -> list[tuple[str, int]]:
        events = EventLog(str(tmp_path / "events.jsonl"), "n4")
        r = _copying(tmp_path, events)
        seen = []
        for name, call in [
            ("add_entries", r.add_entries(3, "n1", None, [], -1)),
            ("truncate", r.truncate(5, "n2", (3, 10))),
            ("fence", r.fence(7)),
            ("stale add_entries", r.add_entries(4, "n1", None, [], -1)),  # older: nothing adopted
            ("repeated fence", r.fence(7)),
        ]:
            err = await _refused(call)
            assert err.code == "tablet_copying", (name, err)
            seen.append((name, _disk_epoch(r)))
            assert r.epoch == _disk_epoch(r) and r.status == "copying"
        events.close()
        return seen

    seen = asyncio.run(scenario())
    assert seen == [("add_entries", 3), ("truncate", 5), ("fence", 7), ("stale add_entries", 7), ("repeated fence", 7)]
    adopted = [e for e in read_events(str(tmp_path / "events.jsonl")) if e["event"] == "epoch_adopted"]
    assert [(e["tablet"], e["epoch"], e["status"]) for e in adopted] == [(0, 3, "copying"), (0, 5, "copying"),
                                                                         (0, 7, "copying")]


def test_a_copying_replica_that_a_copy_replaced_writes_nothing(tmp_path: Path) -> None:
    # A request that picked up the copying object just before the copy swapped in the READY replica must
    # not write the copying object's epoch into the new replica's consensus metadata.
    async def scenario() -> tuple[str, int, int]:
        events = EventLog(str(tmp_path / "events.jsonl"), "n4")
        r = _copying(tmp_path, events)
        await _refused(r.fence(2))
        r.replaced = True
        err = await _refused(r.add_entries(9, "n1", None, [], -1))
        events.close()
        return err.code, r.epoch, _disk_epoch(r)

    assert asyncio.run(scenario()) == ("tablet_replaced", 2, 2)


def test_the_checkpoint_never_claims_a_commit_above_the_fsynced_log(tmp_path: Path) -> None:
    """A leader may commit an entry on two followers' acknowledgements before its own fsync ends; its
    checkpoint then claims only what it holds durably, so a power loss leaves it serving, not damaged.
    Entries that were fsynced and then vanished are reported, with the offsets rule 8 reads."""
    d = tmp_path / "tablets" / "0"
    events = EventLog(str(tmp_path / "events.jsonl"), "n1")

    async def go() -> None:
        r = TabletReplica.create(0, str(d), "n1", events)
        r.append_local([{"e": 1, "o": 0, "v": {"op": "put", "key": "k", "value": 1}}])
        await r.wait_durable(0)
        # Offset 1 is in memory only, as between its append and its fsync, and yet committed.
        r.log.append({"e": 1, "o": 1, "v": {"op": "put", "key": "k", "value": 2}})
        r.advance_commit(1)
        assert r.commit == 1 and r.durable == 0
        await r.persist()
        assert (statefile.read_json(str(d / "state.json")) or {})["commit"] == 0
        assert r.wal is not None
        r.wal.close()

    try:
        asyncio.run(go())
        # A power loss now: the WAL holds offset 0, the checkpoint says 0, and the replica serves it.
        back = TabletReplica.load(0, str(d), "n1", events)
        assert back.status != "damaged" and back.commit == 0 and back.kv.data == {"k": 1}
        assert back.wal is not None
        back.wal.close()
        # Fsynced, committed entries that vanish anyway (an fsync that did not sync) are found on load.
        (d / "wal").write_bytes(b"")
        lost = TabletReplica.load(0, str(d), "n1", events)
        assert lost.status == "damaged"
    finally:
        events.close()
    damaged = [e for e in read_events(str(tmp_path / "events.jsonl")) if e["event"] == "tablet_damaged"]
    assert [(e["log_end"], e["durable_commit"]) for e in damaged] == [(-1, 0)]


def test_a_fence_that_waited_for_a_tombstoning_is_refused_as_by_a_tombstone(tmp_path: Path) -> None:
    """A fence that passed its checks while a delete held the lock must not make the tombstone a fenced
    replica: with its WAL closed, the next batch a leader sent it would kill the flusher, and every later
    append would wait for an fsync that never comes (the clean default campaign at seeds 1, 62f7d1d and
    20e9b2c: a follower whose commit index stopped while its head went on, and a copy onto it that hung)."""
    d = tmp_path / "tablets" / "0"
    events = EventLog(str(tmp_path / "events.jsonl"), "n1")

    async def go() -> tuple[TabletReplica, Any]:
        r = TabletReplica.create(0, str(d), "n1", events)
        r.append_local([{"e": 1, "o": 0, "v": {"op": "noop"}}])
        await r.wait_durable(0)
        results: list[Any] = list(await asyncio.gather(r.delete(1), r.fence(2), return_exceptions=True))
        assert isinstance(results[0], dict) and results[0]["state"] == "DELETED", results
        return r, results[1]

    try:
        r, fenced = asyncio.run(go())
    finally:
        events.close()
    assert isinstance(fenced, RpcError) and fenced.code == "tablet_deleted", fenced
    assert (r.status, r.data_state, r.wal) == ("deleted", "DELETED", None)


def test_a_delete_that_fails_after_closing_the_wal_leaves_the_replica_damaged(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tombstoning closes the WAL before it writes the superblock; when that write fails the replica
    must stop serving. It went on as a follower with no WAL, and the next batch a leader sent it killed
    the flusher with an AssertionError (the clean default campaign at seed 2, CI at 7360a65)."""
    d = tmp_path / "tablets" / "0"
    events = EventLog(str(tmp_path / "events.jsonl"), "n1")

    def full_disk(*_: Any) -> str:
        raise OSError(28, "No space left on device")

    async def go() -> tuple[TabletReplica, RpcError, RpcError]:
        r = TabletReplica.create(0, str(d), "n1", events)
        await r.fence(1)
        monkeypatch.setattr("system.replica.superblock.delete", full_disk)
        with pytest.raises(OSError, match="No space"):
            await r.delete(1)
        batch = [{"e": 1, "o": 0, "v": {"op": "noop"}}]
        # Bounded: on a replica with no WAL the append waits for an fsync that never comes.
        appended = await _refused(asyncio.wait_for(r.add_entries(1, "n2", (-1, -1), batch, 0), 10))
        return r, appended, await _refused(asyncio.wait_for(r.fence(2), 10))

    try:
        r, appended, fenced = asyncio.run(go())
    finally:
        events.close()
    assert (r.status, r.wal) == ("damaged", None)
    assert appended.code == "tablet_damaged" and fenced.code == "tablet_damaged", (appended, fenced)
