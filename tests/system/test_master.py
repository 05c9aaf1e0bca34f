"""The master: join refusals, compare-and-set config changes, retiring and adding nodes, disk loss."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable

import pytest

from system import admin, statefile
from system.launcher import Cluster
from system.wire import RpcError

from .conftest import do_ops, run, wait_for
from .membership_helpers import master_call, master_status, node_tablet, read_all, settled, tablet_view, wait_settled


def join(c: Cluster, **over: object) -> object:
    assert c.master_addr is not None
    params = {"cluster_id": c.secret()["cluster_id"], "token": c.secret()["token"], "uuid": "u-new", "name": "nx",
              "host": "127.0.0.9", "port": 1, **over}
    return admin.call_sync(*c.master_addr, "join", params, timeout=5.0)


def test_join_and_admin_calls_are_checked(make_cluster: Callable[..., Cluster]) -> None:
    c = make_cluster(nodes=3, tablets=1)
    c.wait_ready()
    with pytest.raises(RpcError, match="wrong_cluster"):
        join(c, cluster_id="someone-else")
    with pytest.raises(RpcError, match="bad_token"):
        join(c, token="guess")
    with pytest.raises(RpcError, match="already_member"):
        join(c, uuid=c.node_uuid("n1"), name="n1")
    with pytest.raises(RpcError, match="bad_token"):
        master_call(c, "retire_node", {"node": "n1"}, token="guess")
    wait_for(lambda: {m["state"] for m in master_status(c)["members"].values()} == {"normal"}, what="all normal")
    assert "nx" not in {m["name"] for m in master_status(c)["members"].values()}


def test_stale_config_change_is_rejected_and_a_repeat_is_idempotent(make_cluster: Callable[..., Cluster]) -> None:
    c = make_cluster(nodes=4, tablets=1)
    c.wait_ready()
    v = wait_settled(c)
    spare = next(n for n in c.node_addrs if n not in v["up"])
    first = master_call(c, "add_replica", {"tablet": 0, "node": spare, "config_id": v["config_id"]})
    assert first["config_id"] == v["config_id"] + 1 and first["rf"] == 4
    again = master_call(c, "add_replica", {"tablet": 0, "node": spare, "config_id": v["config_id"]})
    assert again["already"] is True and again["config_id"] == first["config_id"]
    with pytest.raises(RpcError, match="stale_config") as e:  # decided on config 1, which is no longer committed
        master_call(c, "remove_replica", {"tablet": 0, "node": v["up"][0], "config_id": v["config_id"]})
    assert e.value.data["config_id"] == first["config_id"]
    with pytest.raises(RpcError, match="stale_config"):
        master_call(c, "change_replica_count", {"tablet": 0, "count": 3})  # no config id at all
    v = wait_settled(c, size=4)
    assert spare in v["acting"]
    master_call(c, "change_replica_count", {"tablet": 0, "count": 3, "config_id": v["config_id"]})
    assert len(wait_settled(c, size=3)["acting"]) == 3


def test_retire_a_node_then_add_a_node(make_cluster: Callable[..., Cluster]) -> None:
    c = make_cluster(nodes=4, tablets=2)
    c.wait_ready()
    res = run(do_ops(c, [("put", (f"r{i}", i)) for i in range(20)]))
    assert all(r.type == "ok" for r in res)
    holders = [n for n in c.node_addrs if n in wait_settled(c, 0, size=3)["up"]]  # placements exist
    victim = holders[0]
    wait_for(lambda: master_status(c)["members"][victim]["state"] == "normal", what="normal")
    out = master_call(c, "retire_node", {"node": victim})
    assert out["state"] == "decommissioning"
    assert master_call(c, "retire_node", {"node": victim})["already"] is True
    wait_for(lambda: master_status(c)["members"][victim]["state"] == "left", timeout=60, what="drained and left")
    for t in (0, 1):
        v = wait_settled(c, t, size=3)
        assert victim not in v["acting"] and victim not in v["up"]
    # A left node never comes back under its UUID: restarted, its join is refused ...
    with pytest.raises(RpcError, match="removed"):
        join(c, uuid=c.node_uuid(victim), name=victim)
    # ... but its machine, wiped, joins as a new node, and gets replicas when a tablet asks for one.
    c.kill(victim)
    shutil.rmtree(c.procs[victim].info["data"])
    c.launch(victim)
    new = f"{victim}~2"
    wait_for(lambda: master_status(c)["members"].get(new, {}).get("state") == "normal", what="new node normal")
    v = tablet_view(c, 0)
    master_call(c, "add_replica", {"tablet": 0, "node": victim, "config_id": v["config_id"]})
    v = wait_settled(c, 0, size=4)
    assert new in v["acting"]
    assert (node_tablet(c, victim, 0) or {}).get("state") == "READY"
    assert read_all(c, {f"r{i}": i for i in range(20)}) == {}


def test_wiped_disk_is_refused_under_its_old_uuid_and_rejoins_as_new(make_cluster: Callable[..., Cluster]) -> None:
    c = make_cluster(nodes=3, tablets=2)
    c.wait_ready()
    keys = {f"w{i}": i for i in range(30)}
    assert all(r.type == "ok" for r in run(do_ops(c, [("put", (k, v)) for k, v in keys.items()])))
    data = c.procs["n3"].info["data"]
    old_uuid = c.node_uuid("n3")
    instance = statefile.read_json(os.path.join(data, "instance.json"))
    # The disk holding the tablets is lost; the instance file survives: the node must stay offline.
    c.kill("n3")
    shutil.rmtree(os.path.join(data, "tablets"))
    c.launch("n3")
    assert c.wait_exit("n3", timeout=30) == 3
    with open(c.procs["n3"].log) as f:
        assert "disk loss" in f.read()
    assert c.node_uuid("n3") == old_uuid == instance["uuid"]
    # Started with --reformat it takes a new UUID and joins as a new member; the old one is retired.
    c.launch("n3", extra_args=("--reformat",))
    wait_for(lambda: c.node_uuid("n3") not in (None, old_uuid), what="a new UUID")
    wait_for(lambda: master_status(c)["members"]["n3"]["state"] == "left", what="old identity left")
    with pytest.raises(RpcError, match="removed"):
        join(c, uuid=old_uuid, name="n3")
    for t in (0, 1):
        def moved(t: int = t) -> bool:
            return settled(c, t, 3) and "n3~2" in tablet_view(c, t)["acting"]

        wait_for(moved, timeout=60, what="re-replicated to the new member")
        assert "n3" not in tablet_view(c, t)["acting"]
    assert read_all(c, keys) == {}
    # The plain wipe (what the harness's wipe fault does) takes the same path without any flag.
    c.kill("n3")
    shutil.rmtree(data)
    c.launch("n3")
    wait_for(lambda: master_status(c)["members"].get("n3~3", {}).get("state") in ("bootstrapping", "normal"),
             what="second rejoin")
    for t in (0, 1):
        def moved_again(t: int = t) -> bool:
            return settled(c, t, 3) and "n3~3" in tablet_view(c, t)["acting"]

        wait_for(moved_again, timeout=60, what="re-replicated after the plain wipe")
    assert read_all(c, keys) == {}
