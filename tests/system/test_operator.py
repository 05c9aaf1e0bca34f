"""The operator: restart mid-election and mid-reconfiguration, and two operators racing."""

from __future__ import annotations

import asyncio
import json
import os
import random
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from system import admin
from system.client import Client
from system.launcher import Cluster
from system.metadata import open_store
from system.operator.shards import shard_key
from system.wire import RpcError

from .checks import (
    assert_committed_prefixes_agree,
    assert_leaders_commit_only_current_epoch,
    assert_one_leader_per_epoch,
    dumps,
)
from .conftest import run, shard, wait_for
from .test_reconfig import caught_up, get_all, put_all


def stored_shard(c: Cluster, tablet: int) -> dict:
    store = open_store(c.metadata_url)
    try:
        rec = store.get(shard_key(tablet))
        assert rec is not None
        return dict(rec.value)
    finally:
        store.close()


def follower_swap(c: Cluster) -> tuple[dict[str, Any], dict[str, Any]]:
    """Tablet 0 once the cluster is ready, and the reconfig call's parameters for swapping one of its
    followers for a node outside its ensemble."""
    r0 = c.wait_ready()["tablets"]["0"]
    spare = next(n for n in c.node_addrs if n not in r0["ensemble"])
    out = next(n for n in r0["ensemble"] if n != r0["leader"])
    return r0, {"tablet": 0, "op": "swap", "old": out, "new": spare}


def crash_operator_at(c: Cluster, point: str) -> None:
    c.restart("op1", extra_args=("--crash-at", point))
    wait_for(lambda: c.routing(), what="operator back")


@pytest.mark.parametrize("point", ["election:after-fence", "election:after-become-leader"])
def test_operator_restart_mid_election(make_cluster: Callable[..., Cluster], point: str) -> None:
    c = make_cluster(nodes=3, tablets=1, stall_timeout=1.0)
    r0 = c.wait_ready()["tablets"]["0"]
    put_all(c, "a", 20)
    crash_operator_at(c, point)
    c.kill(r0["leader"])
    assert c.wait_exit("op1", 30) == 99, "the operator did not reach the crash point"
    stalled = stored_shard(c, 0)
    assert stalled["status"] == "election" and stalled["epoch"] > r0["epoch"]
    c.launch("op1")
    done = wait_for(lambda: (m := shard(c, 0))["status"] == "steady" and m, what="election completed")
    assert done["epoch"] > stalled["epoch"] and done["leader"] != r0["leader"]
    assert get_all(c, "a", 20) == list(range(20))
    put_all(c, "b", 5)
    assert_one_leader_per_epoch(c)


def reconfig_until_the_operator_dies(c: Cluster, out: str, spare: str, tries: int = 4) -> None:
    """Ask op1 to swap ``out`` for ``spare`` until it dies at its crash point (exit 99). A loaded machine can
    make the call fail before the point (an election under the 1 s stall timeout changes the tablet's
    record under the reconfiguration): then the operator is still up, and it is asked again."""
    errors: list[str] = []
    for _ in range(tries):
        try:
            admin.reconfig(*c.operator_addrs["op1"], 0, "swap", old=out, new=spare, timeout=30)
        except Exception as e:  # the operator dies mid-call, or refused
            errors.append(f"{type(e).__name__}: {e}")
        else:
            pytest.fail("the reconfiguration finished without reaching the crash point")
        code = c.wait_exit("op1", 10)
        if code is not None:
            assert code == 99, errors
            return
    pytest.fail(f"the operator did not reach the crash point in {tries} tries: {errors}")


@pytest.mark.parametrize(("point", "applied"), [("reconfig:after-prepare", False),
                                                ("reconfig:after-commit-meta", True)])
def test_operator_restart_mid_reconfiguration(make_cluster: Callable[..., Cluster], point: str,
                                              applied: bool) -> None:
    c = make_cluster(nodes=4, tablets=1, stall_timeout=1.0)
    r0 = c.wait_ready()["tablets"]["0"]
    leader, ens = r0["leader"], r0["ensemble"]
    spare = next(n for n in c.node_addrs if n not in ens)
    out = next(n for n in ens if n != leader)
    put_all(c, "a", 20)
    crash_operator_at(c, point)
    reconfig_until_the_operator_dies(c, out, spare)
    stalled = stored_shard(c, 0)
    assert stalled["reconfig"]["phase"] == ("commit" if applied else "prepare")
    c.launch("op1")
    done = wait_for(lambda: (m := shard(c, 0))["status"] == "steady" and not m["reconfig"] and m,
                    what="reconfiguration resolved")
    expected = [n for n in ens if n != out] + [spare] if applied else ens
    assert sorted(done["ensemble"]) == sorted(expected)
    assert get_all(c, "a", 20) == list(range(20))
    put_all(c, "b", 5)
    if applied:
        wait_for(lambda: caught_up(c, spare, done["leader"]), what="swapped-in node caught up")
    assert_committed_prefixes_agree(c, 0)


def test_two_racing_operators_lose_no_acknowledged_write(make_cluster: Callable[..., Cluster]) -> None:
    c = make_cluster(nodes=3, tablets=2, operators=2, stall_timeout=1.0)
    c.wait_ready()
    stop = threading.Event()
    rng = random.Random(7)

    def faults() -> None:
        while not stop.is_set():
            victim = rng.choice(sorted(c.node_addrs))
            c.kill(victim)
            time.sleep(1.5)
            c.launch(victim)
            op = rng.choice(["op1", "op2"])
            c.pause(op)
            time.sleep(rng.uniform(0.5, 1.5))
            c.resume(op)
            time.sleep(1.0)

    acked: dict[str, int] = {}
    outcomes: dict[str, int] = {"ok": 0, "fail": 0, "info": 0}

    async def writer(w: int, until: float) -> None:
        cl = Client(c.operators(), timeout=3.0)
        i = 0
        try:
            while time.monotonic() < until:
                key = f"w{w}-{i}"
                r = await cl.put(key, i)
                outcomes[r.type] += 1
                if r.type == "ok":
                    acked[key] = i
                i += 1
        finally:
            await cl.close()

    async def workload() -> None:
        until = time.monotonic() + 12
        await asyncio.gather(*(writer(w, until) for w in range(6)))

    t = threading.Thread(target=faults)
    t.start()
    try:
        run(workload())
    finally:
        stop.set()
        t.join(30)
    for n in c.node_addrs:
        if c.procs[n].pid is None:
            c.launch(n)
    for op in ("op1", "op2"):
        c.resume(op)
    c.wait_ready()
    assert outcomes["ok"] > 50, outcomes

    async def read_back() -> dict[str, object]:
        cl = Client(c.operators(), timeout=10.0)
        try:
            return {k: (await cl.get(k)).value for k in acked}
        finally:
            await cl.close()

    got = run(read_back())
    lost = {k: v for k, v in acked.items() if got[k] != v}
    assert not lost, f"acknowledged writes lost: {sorted(lost)[:10]} ({len(lost)} of {len(acked)})"
    assert_one_leader_per_epoch(c)
    assert_leaders_commit_only_current_epoch(c)
    for tablet in (0, 1):
        assert_committed_prefixes_agree(c, tablet)


def test_reconfig_call_can_arm_a_crash_point_for_itself(make_cluster: Callable[..., Cluster]) -> None:
    """The stalled-swap fault's hook: ``crash_at`` on one reconfig call stops the operator at that step of
    that reconfiguration only; an unknown point is refused before anything changes."""
    c = make_cluster(nodes=4, tablets=1, stall_timeout=1.0)
    r0, params = follower_swap(c)
    leader, ens, out, spare = r0["leader"], r0["ensemble"], params["old"], params["new"]
    host, port = c.operator_addrs["op1"]
    with pytest.raises(RpcError) as refused:
        admin.call_sync(host, port, "reconfig", {**params, "crash_at": "reconfig:nowhere"}, timeout=30)
    assert refused.value.code == "bad_request"
    assert stored_shard(c, 0)["reconfig"] is None
    with pytest.raises(Exception):  # noqa: B017 - the operator dies mid-call
        admin.call_sync(host, port, "reconfig", {**params, "crash_at": "reconfig:after-commit"}, timeout=30)
    assert c.wait_exit("op1", 30) == 99
    stalled = stored_shard(c, 0)
    assert stalled["reconfig"]["phase"] == "commit" and sorted(stalled["ensemble"]) == sorted(ens)
    applied = dumps(c, 0)[leader]
    assert sorted(applied["ensemble"]) == sorted([n for n in ens if n != out] + [spare])
    c.launch("op1")
    done = wait_for(lambda: (m := shard(c, 0))["status"] == "steady" and not m["reconfig"] and m,
                    what="reconfiguration resolved")
    assert sorted(done["ensemble"]) == sorted(applied["ensemble"])
    assert_committed_prefixes_agree(c, 0)


def test_the_operator_logs_each_tablet_action_it_starts_and_its_end(make_cluster: Callable[..., Cluster]) -> None:
    # The self-race checker reads these: one action per tablet at a time, from each operator, its loop's
    # (an election) and a requested one (a swap through the reconfig call) alike.
    c = make_cluster(nodes=4, tablets=1, stall_timeout=1.0)
    _, params = follower_swap(c)
    host, port = c.operator_addrs["op1"]
    admin.call_sync(host, port, "reconfig", params, timeout=30)
    with open(os.path.join(c.dir, "operators", "operator-op1.jsonl")) as log:
        events = [e for e in map(json.loads, log) if e["event"] in ("action_started", "action_ended")]
    assert {e["tablet"] for e in events} == {0}
    assert [e.get("action") for e in events if e["event"] == "action_started"][:2] == ["elect", "reconfigure"]
    assert [e["event"] for e in events][:4] == ["action_started", "action_ended"] * 2, events
