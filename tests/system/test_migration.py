"""Hot migration through the master: move under load, cancel midway, crash mid-copy, stale sessions, and a
failover between a copy's download and its merge."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable

import pytest

from system import statefile
from system.client import Client, Result
from system.events import read_events
from system.launcher import Cluster
from system.metadata import open_store
from system.operator.shards import shard_key
from system.wire import RpcError

from .checks import assert_committed_prefixes_agree, assert_one_leader_per_epoch
from .conftest import node_call, wait_for
from .membership_helpers import Writer, master_call, node_tablet, read_all, tablet_view, wait_settled


def events_of(c: Cluster, node: str) -> list[dict]:
    return read_events(os.path.join(c.procs[node].info["data"], "events.jsonl"))


def test_move_replicas_under_load_lose_no_acknowledged_write(make_cluster: Callable[..., Cluster]) -> None:
    c = make_cluster(nodes=4, tablets=1, replication=3)
    c.wait_ready()
    v = wait_settled(c)
    spare = next(n for n in c.node_addrs if n not in v["up"])
    follower = next(n for n in v["up"] if n != v["leader"])
    w = Writer(c, "m")
    w.start()
    try:
        wait_for(lambda: len(w.acked) > 50, what="writes before the move")
        moved = master_call(c, "move_replica", {"tablet": 0, "from": follower, "to": spare,
                                                "config_id": v["config_id"]})
        assert moved["config_id"] == v["config_id"] + 1 and spare in moved["up"]
        v = wait_settled(c, size=3)
        assert spare in v["acting"] and follower not in v["acting"]
        # Now move the leader itself away (the leadership moves first).
        leader = v["leader"]
        master_call(c, "move_replica", {"tablet": 0, "from": leader, "to": follower, "config_id": v["config_id"]})
        v = wait_settled(c, size=3)
        assert leader not in v["acting"] and v["leader"] != leader
        wait_for(lambda: len(w.acked) > len(moved) + 100, what="writes after the moves")
    finally:
        acked = w.finish()
    assert len(acked) > 100
    assert read_all(c, acked) == {}
    assert (node_tablet(c, leader) or {}).get("state") == "DELETED"  # the moved-away replica is a tombstone
    assert any(e["event"] == "tombstoned" for e in events_of(c, leader))
    assert_committed_prefixes_agree(c, 0)
    assert_one_leader_per_epoch(c)


def test_cancel_migration_midway(make_cluster: Callable[..., Cluster]) -> None:
    c = make_cluster(nodes=4, tablets=1, replication=3)
    c.wait_ready()
    v = wait_settled(c)
    spare = next(n for n in c.node_addrs if n not in v["up"])
    c.restart(spare, extra_args=("--copy-delay", "4"))
    wait_for(lambda: tablet_view(c)["up"] and node_tablet(c, spare) is None and c.node_uuid(spare), what="restart")
    acting = list(v["acting"])
    master_call(c, "move_replica", {"tablet": 0, "from": acting[-1], "to": spare, "config_id": v["config_id"]})
    wait_for(lambda: (node_tablet(c, spare) or {}).get("status") == "copying", what="the copy to start")
    cfg = tablet_view(c)["config_id"]
    out = master_call(c, "cancel_migration", {"tablet": 0, "config_id": cfg})
    assert sorted(out["up"]) == sorted(acting)
    again = master_call(c, "cancel_migration", {"tablet": 0, "config_id": cfg})  # a repeat is idempotent
    assert again["already"] is True
    v = wait_settled(c, size=3)
    assert sorted(v["acting"]) == sorted(acting)
    # The copy that was running belonged to a closed session: it must not make the replica READY.
    wait_for(lambda: any(e["event"] == "copy_failed" for e in events_of(c, spare)), timeout=20, what="copy aborted")
    failed = next(e for e in events_of(c, spare) if e["event"] == "copy_failed")
    assert "stale_session" in failed["error"]
    assert (node_tablet(c, spare) or {}).get("state") == "DELETED"
    leader = tablet_view(c)["leader"]
    assert spare not in (node_call(c, leader, "hello", {})["tablets"]["0"].get("pre_voters") or {})


def test_copy_from_a_stale_session_is_rejected(make_cluster: Callable[..., Cluster]) -> None:
    c = make_cluster(nodes=4, tablets=1, replication=3)
    c.wait_ready()
    v = wait_settled(c)
    spare = next(n for n in c.node_addrs if n not in v["up"])
    leader = v["leader"]
    host, port = c.node_addrs[leader]
    source = {"host": host, "port": port, "uuid": c.node_uuid(leader), "member": leader}
    node_call(c, spare, "close_sessions", {"tablet": 0, "below": 10})
    params = {"tablet": 0, "source": source, "epoch": v["epoch"], "current_state": "DOES_NOT_EXIST"}
    with pytest.raises(RpcError, match="stale_session"):
        node_call(c, spare, "start_tablet_copy", {**params, "session": 9})
    assert node_tablet(c, spare) is None
    out = node_call(c, spare, "start_tablet_copy", {**params, "session": 10})
    assert out["status"] == "copying" and out["session"] == 10
    # The event log, not a poll of the state: the operator may tombstone the READY stray between polls.
    ended = wait_for(lambda: [e for e in events_of(c, spare) if e["event"] in ("copy_done", "copy_failed")],
                     what="the copy")
    assert [(e["event"], e["session"]) for e in ended] == [("copy_done", 10)], ended
    with pytest.raises(RpcError, match="illegal_state"):  # StartTabletCopy checks the caller's view of our state
        node_call(c, spare, "start_tablet_copy", {**params, "session": 10})
    # The stray replica is not in the acting set: the operator tombstones it.
    wait_for(lambda: (node_tablet(c, spare) or {}).get("state") == "DELETED", what="stray tombstoned")
    tomb = node_tablet(c, spare) or {}
    assert tomb["epoch"] >= v["epoch"]  # the tombstone keeps its epoch
    with pytest.raises(RpcError, match="stale_epoch"):  # so a stale fence is refused with it
        node_call(c, spare, "fence", {"tablet": 0, "epoch": 0})


def test_crash_during_copy_goes_back_to_deleted_and_copies_again(make_cluster: Callable[..., Cluster]) -> None:
    c = make_cluster(nodes=4, tablets=1, replication=3)
    c.wait_ready()
    v = wait_settled(c)
    spare = next(n for n in c.node_addrs if n not in v["up"])
    c.restart(spare, extra_args=("--crash-at", "copy:after-wal"))
    wait_for(lambda: c.node_uuid(spare) and node_tablet(c, spare) is None, what="restart")
    master_call(c, "move_replica", {"tablet": 0, "from": v["acting"][-1], "to": spare, "config_id": v["config_id"]})
    assert c.wait_exit(spare, timeout=30) == 99
    sb = statefile.read_json(f"{c.procs[spare].info['data']}/tablets/0/superblock.json")
    assert sb["state"] == "COPYING"
    c.launch(spare)
    v = wait_settled(c, size=3)
    assert spare in v["acting"]
    evs = events_of(c, spare)
    rolled = [e for e in evs if e["event"] == "tablet_state" and "rolled back" in str(e.get("why"))]
    assert rolled and rolled[0]["state"] == "DELETED"
    assert sum(e["event"] == "copy_done" for e in evs) == 1
    assert (node_tablet(c, spare) or {}).get("state") == "READY"


@pytest.mark.parametrize("bug", [False, True], ids=["correct", "copy-overwrites-epoch"])
def test_an_epoch_adopted_during_a_copy_is_kept_by_the_copy(make_cluster: Callable[..., Cluster], bug: bool) -> None:
    # The leader dies between the copy's download (at epoch E) and its merge; the next leader (E+1) streams
    # to the migration's catch-up member, whose copying replica adopts E+1. The copy must end at E+1.
    c = make_cluster(nodes=4, tablets=1, replication=3)
    c.wait_ready()
    v = wait_settled(c)
    spare = next(n for n in c.node_addrs if n not in v["up"])
    leader = v["leader"]
    follower = next(n for n in v["acting"] if n != leader)
    c.restart(spare, extra_args=("--copy-delay", "5", *(("--bug", "copy-overwrites-epoch") if bug else ())))
    wait_for(lambda: c.node_uuid(spare) and node_tablet(c, spare) is None and tablet_view(c)["up"], what="restart")
    master_call(c, "move_replica", {"tablet": 0, "from": follower, "to": spare, "config_id": v["config_id"]})
    started = wait_for(lambda: [e for e in events_of(c, spare) if e["event"] == "copy_started"], what="the copy")
    wait_for(lambda: (node_tablet(c, spare) or {}).get("status") == "copying", what="copying")
    time.sleep(0.5)  # the download takes milliseconds; the merge waits for the copy delay
    c.kill(leader)

    def adopted() -> list[dict]:
        return [e for e in events_of(c, spare) if e["event"] == "epoch_adopted" and e["status"] == "copying"
                and e["epoch"] > v["epoch"]]

    adoption = wait_for(adopted, timeout=5, what="the copying replica to adopt the new leader's epoch")[0]
    done = wait_for(lambda: [e for e in events_of(c, spare) if e["event"] in ("copy_done", "copy_failed")],
                    timeout=20, what="the copy to end")
    assert [e["event"] for e in done] == ["copy_done"] and done[0]["session"] == started[0]["session"], done
    assert done[0]["remote_epoch"] == v["epoch"] and done[0]["local_epoch"] == adoption["epoch"]
    loaded = [e for e in events_of(c, spare) if e["event"] == "tablet_loaded" and e["ts"] >= adoption["ts"]]
    if bug:  # the merge took the downloaded epoch: the node's epoch went down
        assert done[0]["epoch"] == loaded[0]["epoch"] == v["epoch"] < adoption["epoch"]
    else:
        assert done[0]["epoch"] == loaded[0]["epoch"] == adoption["epoch"] > v["epoch"]
    c.launch(leader)
    v = wait_settled(c, size=3)
    assert spare in v["acting"] and follower not in v["acting"]
    assert (node_tablet(c, spare) or {}).get("epoch", -1) >= adoption["epoch"]
    assert_committed_prefixes_agree(c, 0)
    assert_one_leader_per_epoch(c)


def test_a_client_that_cached_a_moved_away_leader_follows_the_tablet(make_cluster: Callable[..., Cluster]) -> None:
    # The moved-away replica is a tombstone that answers ``tablet_deleted``: a refusal that means "not here",
    # so the client must ask the operator again rather than fail every later operation on that tablet (the
    # recovery checker found a final read that failed this way for 30 s after a cancelled copy).
    c = make_cluster(nodes=4, tablets=1, replication=3)
    c.wait_ready()
    v = wait_settled(c)
    leader = v["leader"]
    spare = next(n for n in c.node_addrs if n not in v["up"])

    async def scenario() -> tuple[Result, Result]:
        cl = Client(c.operators(), timeout=10.0)
        try:
            before = await cl.put("k", 1)
            assert cl.leaders[0] == leader
            move = {"tablet": 0, "from": leader, "to": spare, "config_id": v["config_id"]}
            await asyncio.to_thread(master_call, c, "move_replica", move)  # the sync helpers run loops of their own
            await asyncio.to_thread(wait_settled, c, size=3)
            await asyncio.to_thread(wait_for, lambda: (node_tablet(c, leader) or {}).get("state") == "DELETED",
                                    what="the old leader's tombstone")
            assert cl.leaders[0] == leader  # the client still believes the old leader
            return before, await cl.get("k")
        finally:
            await cl.close()

    before, after = asyncio.run(scenario())
    assert before.type == "ok"
    assert (after.type, after.value, after.error) == ("ok", 1, "")


def test_a_new_replica_lost_at_promote_is_copied_again(make_cluster: Callable[..., Cluster]) -> None:
    """At f4490e5 (the default campaign's clean seed 2) two operators raced one migration: one moved it to
    ``promote`` after the copy, the other, still at ``copy``, started the same stage's copy again, which
    tombstoned the new node's replica and failed. ``promote`` then waited for a tombstone to catch up, and the
    migration never ended. Here the operator is down while the same state is set up: the record at
    ``promote`` and the new node's replica a tombstone left by a failed copy."""
    c = make_cluster(nodes=4, tablets=1, replication=3)
    c.wait_ready()
    v = wait_settled(c)
    spare = next(n for n in c.node_addrs if n not in v["up"])
    old, leader = v["acting"][-1], v["leader"]
    c.kill("op1")
    master_call(c, "move_replica", {"tablet": 0, "from": old, "to": spare, "config_id": v["config_id"]})
    store = open_store(c.metadata_url)
    rec = store.get(shard_key(0))
    assert rec is not None and rec.value.get("migration") is None
    session = int(rec.value.get("sessions", 0)) + 1
    mig = {"new": spare, "old": old, "stage": "promote", "session": session}
    assert store.cas(shard_key(0), {**rec.value, "sessions": session, "migration": mig}, rec.version)
    host, _ = c.node_addrs[leader]
    gone = {"host": host, "port": 1, "uuid": c.node_uuid(leader), "member": leader}  # nothing listens there
    node_call(c, spare, "start_tablet_copy", {"tablet": 0, "session": session - 1, "epoch": rec.value["epoch"],
                                              "source": gone, "current_state": "DOES_NOT_EXIST"})
    wait_for(lambda: (node_tablet(c, spare) or {}).get("status") == "deleted", what="the failed copy's tombstone")
    c.launch("op1")
    v = wait_settled(c, size=3, timeout=45)
    assert spare in v["acting"] and old not in v["acting"]
    assert (node_tablet(c, spare) or {}).get("state") == "READY"
    ops = read_events(os.path.join(c.dir, "operators", "operator-op1.jsonl"))
    back = [e for e in ops if e["event"] == "migration_stage" and e.get("previous") == "promote"]
    assert back and back[0]["stage"] == "copy"
