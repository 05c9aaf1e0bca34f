"""What the reference system's client and faults need to reach a running cluster.

The plugin lays the cluster out (:mod:`fencepost_reference.plugin`) and keeps the run's secret
token and shape; the addresses come from the backend, so the same code reaches local processes and
containers.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from typing import TYPE_CHECKING, Any

from fencepost import CONTROL
from system.admin import call
from system.wire import ConnectionLost, RpcError, Unreachable

if TYPE_CHECKING:
    from fencepost import ClusterView


def process_of(member: str) -> str:
    """The process a member id runs in: a node that rejoined after a wipe is member ``n3~2`` of process ``n3``."""
    return member.split("~", 1)[0]


def operators(cluster: ClusterView) -> list[str]:
    """The operators' names: the first is the active one, the rest are standbys."""
    return cluster.members(CONTROL)


OPERATOR_CALL_TIMEOUT_S = 30.0
TRANSPORT_ERRORS = (TimeoutError, OSError, ConnectionLost, Unreachable)
ELECTION_POLL_S = 0.25


async def operator_call(cluster: ClusterView, method: str, params: dict[str, Any], active_only: bool = False) -> Any:
    """One call to the first operator that answers (with ``active_only``, to the active one alone); a
    refusal (:class:`system.wire.RpcError`) is raised, and RuntimeError when no operator answers."""
    last: Exception | None = None
    addresses = cluster_info(cluster)["operators"]
    for host, port in addresses[:1] if active_only else addresses:
        try:
            return await call(host, int(port), method, params, timeout=OPERATOR_CALL_TIMEOUT_S)
        except TRANSPORT_ERRORS as e:
            last = e
    raise RuntimeError(f"no operator answers: {last}")


async def await_election(cluster: ClusterView, tablet: str, old_leader: str, epoch: int,
                         limit_s: float) -> dict[str, Any] | None:
    """The new leader, epoch and ensemble of ``tablet`` once an election after ``epoch`` replaced
    ``old_leader`` (as the operator routes it), or None if none did within ``limit_s`` seconds."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        with contextlib.suppress(RuntimeError, RpcError):
            tab = (await operator_call(cluster, "routing", {}))["tablets"].get(tablet)  # None until it loaded them
            if (tab is not None and tab["status"] == "steady" and tab["leader"] not in (None, old_leader)
                    and tab["epoch"] > epoch):
                return {"leader": tab["leader"], "epoch": tab["epoch"], "ensemble": tab["ensemble"]}
        await asyncio.sleep(ELECTION_POLL_S)
    return None


NODE_CALL_TIMEOUT_S = 2.0


async def node_call(cluster: ClusterView, node: str, method: str, params: dict[str, Any]) -> Any:
    """One call to data node ``node`` (by process name), addressed to the UUID it answers ``hello`` with."""
    host, port = cluster_info(cluster)["nodes"][node]
    hello = await call(host, int(port), "hello", {}, timeout=NODE_CALL_TIMEOUT_S)
    if method == "hello":
        return hello
    return await call(host, int(port), method, params, to=hello["uuid"], timeout=NODE_CALL_TIMEOUT_S)


async def replica_summary(cluster: ClusterView, node: str, tablet: str) -> dict[str, Any] | None:
    """``node``'s heartbeat summary of ``tablet`` (None: it has no replica, or does not answer)."""
    with contextlib.suppress(*TRANSPORT_ERRORS, RpcError):
        got = (await node_call(cluster, node, "hello", {}))["tablets"].get(tablet)
        return dict(got) if got is not None else None
    return None


def cluster_info(cluster: ClusterView) -> dict[str, Any]:
    """``operators`` (addresses, for routing), ``nodes`` (name -> address), ``master`` (address and admin
    token), ``tablets`` and ``replication``."""
    shape = getattr(cluster.system, "shape", {})
    return {"operators": [cluster.address(o) for o in operators(cluster)],
            "nodes": {n: cluster.address(n) for n in cluster.nodes()},
            "master": {"addr": cluster.address("master"), "token": shape.get("token")} if "master" in cluster.specs
            else None,
            "tablets": shape.get("tablets"), "replication": shape.get("replication")}


async def node_uuid(cluster: ClusterView, node: str) -> str | None:
    """The UUID in the node's instance file, once it has written one (None before, or if unreadable)."""
    raw = await cluster.backend.disk.read_file(node, "instance.json")
    if not raw:
        return None
    try:
        return str(json.loads(raw)["uuid"])
    except (ValueError, KeyError, TypeError):
        return None
