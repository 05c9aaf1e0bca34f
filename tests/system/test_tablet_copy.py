"""Tablet copy between two real nodes (in this process, over the real wire protocol): the merge reads the
destination's consensus metadata as it is at merge time, so an epoch adopted mid-copy survives the copy."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from system import bugs, identity
from system.events import EventLog, read_events
from system.node import Node
from system.replica import TabletReplica
from system.tablet_copy import SessionGuards
from system.wire import RpcError, RpcServer

SOURCE_EPOCH = 3
ENTRIES = [{"e": 1, "o": 0, "v": {"op": "noop"}}, {"e": 1, "o": 1, "v": {"op": "put", "key": "a", "value": 1}},
           {"e": 3, "o": 2, "v": {"op": "noop"}}]


async def _node(tmp: Path, name: str, copy_delay: float = 0.0) -> tuple[Node, RpcServer]:
    data = str(tmp / name)
    Path(data).mkdir()
    node = Node(name, data, identity.check(data, name), EventLog(str(tmp / name / "events.jsonl"), name),
                copy_delay=copy_delay)
    server = RpcServer(node.dispatch)
    await server.start("127.0.0.1", 0)
    return node, server


@contextlib.asynccontextmanager
async def _source_and_destination(tmp: Path, copy_delay: float = 0.0) -> AsyncIterator[tuple[Node, dict[str, Any]]]:
    """A source node n1 holding tablet 0 at SOURCE_EPOCH, and a new destination node n4 (its copies pausing
    ``copy_delay`` between download and merge): the destination, and the source as a copy names it. Both
    are closed afterwards."""
    src, src_server = await _node(tmp, "n1")
    dst, dst_server = await _node(tmp, "n4", copy_delay=copy_delay)
    try:
        src.tablets[0] = TabletReplica.create(0, src.tablet_dir(0), src.member, src.events)
        await src.tablets[0].install_snapshot(SOURCE_EPOCH, ENTRIES, 1)
        yield dst, {"host": "127.0.0.1", "port": src_server.port, "uuid": src.uuid, "member": "n1"}
    finally:
        for server in (src_server, dst_server):
            await server.close()
        for node in (src, dst):
            await node.close()


async def _copy_with_adoption(tmp: Path, adopt_epoch: int | None) -> tuple[TabletReplica, dict[str, Any], Any]:
    """Copy tablet 0 from a source at SOURCE_EPOCH to a new node whose copy pauses 0.5 s between download and
    merge; during the pause a leader at ``adopt_epoch`` (if any) reaches the copying replica. Return the
    copying object, the destination's copy_done event, and what the copying object answers afterwards."""
    async with _source_and_destination(tmp, copy_delay=0.5) as (dst, source):
        started = await dst.rpc_start_tablet_copy({"tablet": 0, "session": 1, "source": source,
                                                   "epoch": SOURCE_EPOCH, "current_state": "DOES_NOT_EXIST"})
        assert started["status"] == "copying"
        copying = dst.tablets[0]
        await asyncio.sleep(0.2)  # the download is done; the copy waits before its merge
        if adopt_epoch is not None:
            with pytest.raises(RpcError, match="being copied"):
                await dst.rpc_add_entries({"tablet": 0, "epoch": adopt_epoch, "leader": "n2", "prev": None,
                                           "entries": [], "commit": -1})
        for _ in range(100):
            if dst.tablets[0] is not copying:
                break
            await asyncio.sleep(0.05)
        try:
            await copying.fence(99)
            late: Any = "answered"
        except RpcError as e:
            late = e.code
        done = [e for e in read_events(str(tmp / "n4" / "events.jsonl")) if e["event"] in ("copy_done", "copy_failed")]
        assert [e["event"] for e in done] == ["copy_done"], done
        return dst.tablets[0], done[0], late


def test_an_epoch_adopted_during_the_copy_wins_the_merge(tmp_path: Path) -> None:
    replica, done, late = asyncio.run(_copy_with_adoption(tmp_path, 5))
    assert (replica.status, replica.data_state, replica.epoch) == ("fenced", "READY", 5)
    assert (done["epoch"], done["remote_epoch"], done["local_epoch"]) == (5, SOURCE_EPOCH, 5)
    assert [e["o"] for e in replica.log] == [0, 1, 2] and replica.commit == 1
    # The copying object was replaced: a request that still holds it leaves the READY replica alone.
    assert late == "tablet_replaced" and replica.epoch == 5


def test_without_an_adoption_the_copy_takes_the_source_epoch(tmp_path: Path) -> None:
    replica, done, _ = asyncio.run(_copy_with_adoption(tmp_path, None))
    assert replica.epoch == SOURCE_EPOCH and (done["epoch"], done["local_epoch"]) == (SOURCE_EPOCH, -1)


def test_under_copy_overwrites_epoch_the_adopted_epoch_is_lost(tmp_path: Path) -> None:
    bugs.configure(["copy-overwrites-epoch"])
    try:
        replica, done, _ = asyncio.run(_copy_with_adoption(tmp_path, 5))
    finally:
        bugs.configure([])
    assert replica.epoch == SOURCE_EPOCH and (done["epoch"], done["local_epoch"]) == (SOURCE_EPOCH, 5)


async def _two_racing_copies(tmp: Path) -> tuple[list[Any], TabletReplica, list[dict[str, Any]]]:
    """Two StartTabletCopy calls for one tablet and session at once (two operators racing, or one retrying):
    what each answered, the replica afterwards, and the destination's copy events."""
    async with _source_and_destination(tmp) as (dst, source):
        params = {"tablet": 0, "session": 1, "source": source, "epoch": SOURCE_EPOCH, "current_state": "DOES_NOT_EXIST"}
        answers = await asyncio.gather(dst.rpc_start_tablet_copy(dict(params)), dst.rpc_start_tablet_copy(dict(params)),
                                       return_exceptions=True)
        for _ in range(100):
            if dst.tablets[0].status != "copying":
                break
            await asyncio.sleep(0.05)
        events = [e for e in read_events(str(tmp / "n4" / "events.jsonl"))
                  if e["event"] in ("copy_started", "copy_done", "copy_failed", "tablet_damaged")]
        return list(answers), dst.tablets[0], events


def test_a_second_start_of_the_same_copy_is_refused_while_the_first_runs(tmp_path: Path) -> None:
    # The clean default campaign at seed 1 (5c64871): two operators both started session 2's copy of tablet 3
    # on n3 0.15 s apart. Each saw no replica yet, both copied into the same folder, one failed renaming the
    # other's state.json.tmp, and the survivor came up READY with an empty log below a durable commit of 471.
    answers, replica, events = asyncio.run(_two_racing_copies(tmp_path))
    started = [a for a in answers if isinstance(a, dict)]
    refused = [a for a in answers if isinstance(a, RpcError)]
    assert len(started) == 1 and [e.code for e in refused] == ["already_in_progress"], answers
    assert [e["event"] for e in events] == ["copy_started", "copy_done"], events
    assert (replica.data_state, replica.epoch) == ("READY", SOURCE_EPOCH)
    assert [e["o"] for e in replica.log] == [0, 1, 2] and replica.commit == 1


def test_barriers_of_different_tablets_at_once_keep_every_close_durable(tmp_path: Path) -> None:
    """One node's barriers for different tablets run in threads at once and share ``sessions.json``: each
    must land whole. They shared the temp file too, so one barrier's rename failed (FileNotFoundError: the
    other had renamed it already; the clean default campaign's baseline at c0edbb0) or renamed the other's
    half-written file, losing a close."""
    path = tmp_path / "sessions.json"
    guards = SessionGuards(str(path))

    def close(t: int) -> None:
        for below in range(1, 6):
            guards.close_below(t, below)

    with ThreadPoolExecutor(max_workers=16) as pool:
        list(pool.map(close, range(32)))  # raises what any barrier raised
    assert json.loads(path.read_text()) == {str(t): 5 for t in range(32)}
    assert SessionGuards(str(path)).closed_below == {str(t): 5 for t in range(32)}


def test_a_copy_delay_set_at_run_time_outlasts_a_restart(tmp_path: Path) -> None:
    # In the default campaign at 17286d9 another window's power loss restarted the destination of a copy
    # that copy-failover had slowed, and the copy the operator started again ran at full speed.
    async def scenario() -> None:
        data = tmp_path / "n4"
        data.mkdir()

        def opened() -> Node:
            return Node("n4", str(data), identity.check(str(data), "n4"), EventLog(str(data / "events.jsonl"), "n4"))

        node = opened()
        assert (await node.rpc_set_copy_delay({"seconds": 2.5}))["changed"]
        await node.close()
        node = opened()
        assert node.copy_delay == 2.5
        assert not (await node.rpc_set_copy_delay({"seconds": 2.5}))["changed"]  # logged once, not again
        assert (await node.rpc_set_copy_delay({"seconds": 0}))["changed"]
        await node.close()
        node = opened()
        assert node.copy_delay == 0.0
        await node.close()
        assert [e["seconds"] for e in read_events(str(data / "events.jsonl")) if e["event"] == "copy_delay_set"] \
            == [2.5, 0.0]

    asyncio.run(scenario())
