"""Elections, truncation and the commit rules, on real processes."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from system import admin
from system.events import read_events
from system.launcher import Cluster

from .checks import (
    assert_committed_prefixes_agree,
    assert_leaders_commit_only_current_epoch,
    assert_one_leader_per_epoch,
    dumps,
)
from .conftest import do_ops, run, shard, wait_for


def puts(prefix: str, n: int) -> list[tuple[str, tuple]]:
    return [("put", (f"{prefix}{i}", i)) for i in range(n)]


def gets(prefix: str, n: int) -> list[tuple[str, tuple]]:
    return [("get", (f"{prefix}{i}",)) for i in range(n)]


def test_leader_failover_keeps_acknowledged_writes(make_cluster: Callable[..., Cluster]) -> None:
    c = make_cluster(nodes=3, tablets=1, stall_timeout=1.0)
    r0 = c.wait_ready()["tablets"]["0"]
    assert all(r.type == "ok" for r in run(do_ops(c, puts("a", 30))))
    c.kill(r0["leader"])
    r1 = wait_for(lambda: (m := shard(c, 0))["status"] == "steady" and m["leader"] != r0["leader"] and m,
                  what="a new leader")
    assert r1["epoch"] > r0["epoch"]
    got = run(do_ops(c, gets("a", 30)))
    assert [g.value for g in got] == list(range(30))
    assert all(r.type == "ok" for r in run(do_ops(c, puts("b", 10))))
    # the old leader comes back, is fenced into the current epoch and catches up as a follower
    c.launch(r0["leader"])
    leader_head = lambda: dumps(c, 0)[r1["leader"]]["head"]  # noqa: E731
    wait_for(lambda: dumps(c, 0).get(r0["leader"], {}).get("head") == leader_head(), what="old leader caught up")
    assert dumps(c, 0)[r0["leader"]]["status"] == "follower"
    assert_committed_prefixes_agree(c, 0)
    assert_one_leader_per_epoch(c)
    assert_leaders_commit_only_current_epoch(c)


def test_dirty_entries_are_truncated_and_prior_epochs_commit_indirectly(
        make_cluster: Callable[..., Cluster]) -> None:
    c = make_cluster(nodes=3, tablets=1, stall_timeout=1.0)
    r0 = c.wait_ready()["tablets"]["0"]
    old = r0["leader"]
    followers = [n for n in r0["ensemble"] if n != old]
    assert all(r.type == "ok" for r in run(do_ops(c, puts("a", 10))))
    # With both followers down, the leader appends an entry nobody else receives: a dirty entry.
    # (Pausing them is not enough: the kernel would buffer the entry and deliver it on resume.)
    for f in followers:
        c.kill(f)
    (dirty,) = run(do_ops(c, [("put", ("dirty", 1))], timeout=1.0))
    assert dirty.type == "info", dirty
    host, port = c.node_addrs[old]
    old_head = admin.call_sync(host, port, "hello", {})["tablets"]["0"]["head"]
    c.kill(old)
    for f in followers:
        c.launch(f)
    r1 = wait_for(lambda: (m := shard(c, 0))["status"] == "steady" and m["leader"] in followers and m,
                  what="a follower elected")
    assert [g.value for g in run(do_ops(c, gets("a", 10)))] == list(range(10))
    c.launch(old)
    # The leader's probe makes the old leader a follower before its truncate arrives: wait for the cut itself.
    cut = wait_for(lambda: [e for e in _events(c.procs[old].info["data"])
                            if e["event"] == "truncated" and e["epoch"] == r1["epoch"]],
                   what="the old leader truncated in the new epoch")
    assert dumps(c, 0)[old]["status"] == "follower"
    assert tuple(cut[-1]["head"]) < tuple(old_head), "the dirty entry survived the truncation"
    wait_for(lambda: dumps(c, 0)[old]["head"] == dumps(c, 0)[r1["leader"]]["head"], what="catch-up")
    d = dumps(c, 0)[old]
    assert all(e["v"].get("key") != "dirty" for e in d["entries"])
    assert run(do_ops(c, [("get", ("dirty",))]))[0].value is None
    assert_committed_prefixes_agree(c, 0)
    assert_leaders_commit_only_current_epoch(c)
    # the new leader's first commit covered the previous epoch's entries through its own no-op
    leader_dump = dumps(c, 0)[r1["leader"]]
    noop = next(e for e in leader_dump["entries"] if e["e"] == r1["epoch"])
    assert noop["v"] == {"op": "noop"}


def _events(data_dir: str) -> list[dict]:
    from system.events import read_events

    return read_events(os.path.join(data_dir, "events.jsonl"))


def test_whole_cluster_restart_recovers_from_disk(make_cluster: Callable[..., Cluster]) -> None:
    c = make_cluster(nodes=3, tablets=2, stall_timeout=1.0)
    c.wait_ready()
    assert all(r.type == "ok" for r in run(do_ops(c, puts("p", 40))))
    assert run(do_ops(c, [("append", ("log", "x")), ("append", ("log", "y"))]))[1].value == 1
    for n in c.node_addrs:
        c.kill(n)
    for n in c.node_addrs:
        c.launch(n)
    wait_for(lambda: all(m["status"] == "steady" and m["leader"] and m["epoch"] >= 2
                         for m in op_tablets(c).values()), what="re-election after restart")
    assert [g.value for g in run(do_ops(c, gets("p", 40)))] == list(range(40))
    assert run(do_ops(c, [("read", ("log",))]))[0].value == ["x", "y"]
    for t in (0, 1):
        assert_committed_prefixes_agree(c, t)


def op_tablets(c: Cluster) -> dict:
    from .conftest import op_call

    return op_call(c, "status", {})["tablets"]


def test_damaged_wal_is_detected_and_the_tablet_not_served(make_cluster: Callable[..., Cluster]) -> None:
    c = make_cluster(nodes=3, tablets=2, stall_timeout=1.0)
    routing = c.wait_ready()["tablets"]
    # a node that follows both tablets
    victim = next(n for n in c.node_addrs if all(m["leader"] != n for m in routing.values()))
    assert all(r.type == "ok" for r in run(do_ops(c, puts("w", 40))))
    for t in (0, 1):
        def caught_up(t: int = t) -> bool:
            return bool(dumps(c, t)[victim]["head"] == dumps(c, t)[routing[str(t)]["leader"]]["head"])

        wait_for(caught_up, what="victim caught up")
    c.terminate(victim)
    from .conftest import wal_path

    p0 = wal_path(c, victim, 0)
    os.truncate(p0, os.path.getsize(p0) - 3)  # a torn last record
    p1 = wal_path(c, victim, 1)
    data = bytearray(Path(p1).read_bytes())
    data[len(data) // 2] ^= 0xFF  # flipped bits in the middle
    Path(p1).write_bytes(bytes(data))
    c.launch(victim)
    events = os.path.join(c.procs[victim].info["data"], "events.jsonl")

    def damage() -> dict[int, str]:
        return {e["tablet"]: e["reason"] for e in read_events(events) if e["event"] == "tablet_damaged"}

    wait_for(lambda: len(damage()) == 2, what="both tablets found damaged")
    assert "truncated record" in damage()[0]
    assert "checksum" in damage()[1]
    # A damaged replica never serves: the operator contracts it, it is tombstoned (its files kept in
    # quarantine for forensics) and copied again from the leader.
    for t in (0, 1):
        def repaired(t: int = t) -> bool:
            status = admin.call_sync(*c.node_addrs[victim], "hello", {})["tablets"][str(t)]["status"]
            ensemble = (c.routing() or {"tablets": {}})["tablets"].get(str(t), {}).get("ensemble", [])
            return (status in ("fenced", "follower") and victim in ensemble
                    and any(e["event"] == "copy_done" and e["tablet"] == t for e in read_events(events)))

        wait_for(repaired, timeout=60, what=f"tablet {t} repaired by a copy")
    quarantined = [os.path.join(d, "wal") for d, _, files in os.walk(os.path.join(c.procs[victim].info["data"],
                                                                              "quarantine")) if "wal" in files]
    assert quarantined and all(os.path.getsize(q) > 0 for q in quarantined)
    evs = read_events(events)
    since = max(i for i, e in enumerate(evs) if e["event"] == "node_started")
    for t in (0, 1):
        after = [e for e in evs[since:] if e.get("tablet") == t]
        copied = next(i for i, e in enumerate(after) if e["event"] == "copy_done")
        assert not [e for e in after[:copied] if e["event"] in ("following", "became_leader", "fenced")], \
            f"damaged tablet {t} served before it was copied again"
    # the rest of the cluster still serves every acknowledged write
    assert [g.value for g in run(do_ops(c, gets("w", 40)))] == list(range(40))
    assert all(r.type == "ok" for r in run(do_ops(c, puts("after", 5))))
