"""Calls to the master's admin API that several fault packages make (not a fault package itself)."""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

from fencepost import ClusterView
from fencepost_reference.info import cluster_info
from system.admin import call
from system.wire import RpcError

CALL_TIMEOUT_S = 10.0
_HELD: weakref.WeakKeyDictionary[ClusterView, set[str]] = weakref.WeakKeyDictionary()


def held_counts(cluster: ClusterView) -> set[str]:
    """The tablets whose replica count a fault window in progress has changed on purpose, by tablet id:
    another window's :func:`restore_replica_counts` leaves them alone, and the window that holds one
    restores it when it ends. Add a tablet when the change is made, discard it before restoring."""
    held = _HELD.get(cluster)
    if held is None:
        held = _HELD[cluster] = set()
    return held


def master_addr(cluster: ClusterView) -> tuple[str, int, str]:
    """The master's host, port and admin token.

    Raises:
        RuntimeError: the cluster runs no master.
    """
    info = cluster_info(cluster).get("master")
    if not info:
        raise RuntimeError("the cluster runs no master: this fault changes placements through it")
    host, port = info["addr"]
    return host, int(port), str(info["token"])


async def master_status(cluster: ClusterView) -> dict[str, Any]:
    """The master's status: members, and per tablet its up, acting and stray sets and migration."""
    host, port, _ = master_addr(cluster)
    return dict(await call(host, port, "status", {}, timeout=CALL_TIMEOUT_S))


def settled_with_spare(status: dict[str, Any]) -> tuple[set[str], dict[str, Any]]:
    """From a master status: the live members, and the tablets that are settled (no migration, a leader, up
    and acting the same) with a live member outside their up set, by tablet id."""
    live = {m for m, r in status["members"].items() if r["state"] == "normal" and r["alive"]}
    ready = {t: tab for t, tab in status["tablets"].items()
             if tab["migration"] is None and tab["leader"] and tab["up"]
             and sorted(tab["up"]) == sorted(tab["acting"]) and live - set(tab["up"])}
    return live, ready


async def admin(cluster: ClusterView, method: str, params: dict[str, Any]) -> Any:
    """One admin call with the cluster's token (``params`` name the config id themselves)."""
    host, port, token = master_addr(cluster)
    return await call(host, port, method, {**params, "token": token}, timeout=CALL_TIMEOUT_S)


async def restore_replica_counts(cluster: ClusterView, tries: int = 5) -> dict[str, int]:
    """Set every tablet's replica count back to the cluster's replication factor (the master's policy
    loop then re-adds replicas); a change that races another one is retried. Returns tablet -> count.

    A tablet another window holds (:func:`held_counts`) is left as it is: in the default campaign one
    window's end used to put back the count a ``catch-up-partition`` window had just raised, and the
    operator cancelled that window's migration before it could cut anything."""
    rf = int(cluster_info(cluster).get("replication") or 3)
    restored: dict[str, int] = {}
    for _ in range(tries):
        st = await master_status(cluster)
        todo = {t: tab for t, tab in st["tablets"].items()
                if tab["rf"] is not None and int(tab["rf"]) != rf and t not in held_counts(cluster)}
        if not todo:
            break
        for t, tab in todo.items():
            try:
                await admin(cluster, "change_replica_count", {"tablet": int(t), "count": rf,
                                                              "config_id": tab["config_id"]})
                restored[t] = rf
            except RpcError as e:
                if e.code not in ("stale_config", "busy"):
                    raise
        await asyncio.sleep(0.2)
    return restored
