"""Reconfiguration by two-phase commit: node swap, expand and contract (with the commit-index rule)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from system import admin
from system.launcher import Cluster
from system.operator.reconfig import ReconfigRefused, check_allowed
from system.wire import RpcError

from .checks import assert_committed_prefixes_agree, assert_one_leader_per_epoch, dumps
from .conftest import do_ops, run, shard, wait_for


def put_all(c: Cluster, prefix: str, n: int) -> None:
    res = run(do_ops(c, [("put", (f"{prefix}{i}", i)) for i in range(n)]))
    assert all(r.type == "ok" for r in res), res


def get_all(c: Cluster, prefix: str, n: int) -> list[Any]:
    return [r.value for r in run(do_ops(c, [("get", (f"{prefix}{i}",)) for i in range(n)]))]


def caught_up(c: Cluster, node: str, leader: str) -> bool:
    d = dumps(c, 0)
    return node in d and d[node]["head"] == d[leader]["head"] and d[node]["commit"] == d[leader]["commit"]


def test_swap_expand_contract(make_cluster: Callable[..., Cluster]) -> None:
    c = make_cluster(nodes=4, tablets=1, replication=3, stall_timeout=1.0)
    r0 = c.wait_ready()["tablets"]["0"]
    leader, ens = r0["leader"], r0["ensemble"]
    spare = next(n for n in c.node_addrs if n not in ens)
    out = next(n for n in ens if n != leader)
    op = c.operator_addrs["op1"]
    put_all(c, "a", 20)

    with pytest.raises(RpcError, match="refused"):
        admin.reconfig(*op, 0, "swap", old=leader, new=spare)  # a swap never removes the leader
    with pytest.raises(RpcError, match="refused"):
        admin.reconfig(*op, 0, "expand", new=out)  # already a member

    done = admin.reconfig(*op, 0, "swap", old=out, new=spare)
    assert sorted(done["ensemble"]) == sorted([*(n for n in ens if n != out), spare])
    assert done["epoch"] == r0["epoch"] + 1 and done["reconfig"] is None
    put_all(c, "b", 10)
    wait_for(lambda: caught_up(c, spare, leader), what="swapped-in node caught up")
    assert dumps(c, 0)[spare]["kv"]["a3"] == 3

    done = admin.reconfig(*op, 0, "expand", new=out)
    assert len(done["ensemble"]) == 4
    put_all(c, "c", 10)
    wait_for(lambda: caught_up(c, out, leader), what="expanded node caught up")

    done = admin.reconfig(*op, 0, "contract", old=spare)
    assert sorted(done["ensemble"]) == sorted(ens)
    put_all(c, "d", 10)
    for p, n in (("a", 20), ("b", 10), ("c", 10), ("d", 10)):
        assert get_all(c, p, n) == list(range(n))
    assert shard(c, 0)["leader"] == leader
    assert_committed_prefixes_agree(c, 0)
    assert_one_leader_per_epoch(c)


def test_contract_waits_until_the_commit_index_is_safe(make_cluster: Callable[..., Cluster]) -> None:
    c = make_cluster(nodes=3, tablets=1, stall_timeout=1.0)
    r0 = c.wait_ready()["tablets"]["0"]
    leader = r0["leader"]
    stay, drop = [n for n in r0["ensemble"] if n != leader]
    put_all(c, "a", 20)
    # With `stay` down, only the leader and `drop` hold the latest entries: removing `drop` now would
    # leave committed entries on one node of two, so the leader must refuse the commit phase.
    c.kill(stay)
    put_all(c, "b", 5)
    result: dict[str, Any] = {}

    def contract() -> None:
        try:
            result["done"] = admin.reconfig(*c.operator_addrs["op1"], 0, "contract", old=drop)
        except Exception as e:
            result["error"] = e

    t = threading.Thread(target=contract)
    t.start()
    try:
        wait_for(lambda: (shard(c, 0).get("reconfig") or {}).get("phase") == "commit", what="commit phase")
        assert "done" not in result and "error" not in result
        assert shard(c, 0)["ensemble"] == r0["ensemble"]
        c.launch(stay)  # it catches up, the commit index is safe again, the retried commit succeeds
    finally:
        t.join(60)
    assert "error" not in result, result
    assert sorted(result["done"]["ensemble"]) == sorted([leader, stay])
    assert get_all(c, "a", 20) == list(range(20)) and get_all(c, "b", 5) == list(range(5))
    put_all(c, "c", 5)
    assert_committed_prefixes_agree(c, 0)


def test_a_swap_that_failed_in_prepare_is_abandoned_with_one_member_down(
        make_cluster: Callable[..., Cluster]) -> None:
    # The clean default campaign at seed 7 (c32e897): a swap failed in PREPARE (its new node could not take
    # the snapshot) while one member was gone, and every election after it asked for 3 fences of the 4 nodes
    # (the ensemble and the new one), which the two members left could never give: leaderless for good.
    c = make_cluster(nodes=4, tablets=1, replication=3, stall_timeout=1.0)
    r0 = c.wait_ready()["tablets"]["0"]
    leader, ens = r0["leader"], r0["ensemble"]
    spare = next(n for n in c.node_addrs if n not in ens)
    down, out = [n for n in ens if n != leader]
    put_all(c, "a", 10)
    c.kill(spare)  # the swap's new node never gets its snapshot
    c.kill(down)  # and one member is away: the leader and `out` alone answer
    with pytest.raises(RpcError) as failed:
        admin.reconfig(*c.operator_addrs["op1"], 0, "swap", old=out, new=spare)
    assert failed.value.code == "reconfig_failed", failed.value
    wait_for(lambda: shard(c, 0)["status"] == "steady" and not shard(c, 0).get("reconfig"), timeout=20,
             what="an election that abandons the swap")
    assert sorted(shard(c, 0)["ensemble"]) == sorted(ens)
    put_all(c, "b", 5)
    assert get_all(c, "a", 10) == list(range(10))
    assert_committed_prefixes_agree(c, 0)
    assert_one_leader_per_epoch(c)


def test_a_node_catching_up_in_a_migration_joins_only_by_its_promote() -> None:
    # The clean default campaign at seed 10 (cb0d44a): a membership swap onto n1 while n1 was catching
    # up in tablet 1's migration installed a snapshot on it beside the leader's catch-up stream, whose next
    # truncation (from the head it knew, 1290) would have cut entries committed up to 1348; n1 refused it.
    meta = {"status": "steady", "leader": "n3", "ensemble": ["n3", "n4", "n2"], "reconfig": None, "epoch": 13,
            "migration": {"new": "n1", "old": "n4", "stage": "copy", "session": 12}}
    known = ["n1", "n2", "n3", "n4", "n5"]
    for op, old in (("swap", "n4"), ("expand", None)):
        with pytest.raises(ReconfigRefused, match="catching up in the tablet's migration"):
            check_allowed(meta, op, old, "n1", known)
        check_allowed(meta, op, old, "n5", known)  # another node may still join
    check_allowed(meta, "expand", None, "n1", known, promote=True)  # the migration's own promote
    check_allowed({**meta, "migration": None}, "swap", "n4", "n1", known)


def test_a_migrations_new_member_is_not_swapped_out_before_the_migration_ends() -> None:
    # The clean default campaign on Docker at seed 4 (9346cf2): tablet 3's migration had promoted n2~2
    # (stage contract) when a stalled-swap window's unstalled swap took n2~2 out for n1~3; the migration
    # then logged done without its new node in the ensemble, which the migrations checker reported.
    meta = {"status": "steady", "leader": "n4", "ensemble": ["n4", "n3", "n2"], "reconfig": None, "epoch": 25,
            "migration": {"new": "n2", "old": None, "stage": "contract", "session": 29}}
    known = ["n1", "n2", "n3", "n4"]
    for op, new in (("swap", "n1"), ("contract", None)):
        with pytest.raises(ReconfigRefused, match="joining in the tablet's migration"):
            check_allowed(meta, op, "n2", new, known)
        check_allowed(meta, op, "n3", new, known)  # another follower may still leave
    check_allowed({**meta, "migration": None}, "swap", "n2", "n1", known)
