"""What the reference system's client and faults need to reach a running cluster.

The plugin lays the cluster out (:mod:`harness.systems.reference.plugin`) and keeps the run's secret
token and shape; the addresses come from the backend, so the same code reaches local processes and
containers.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from harness.systems.api import CONTROL

if TYPE_CHECKING:
    from harness.cluster import Cluster


def process_of(member: str) -> str:
    """The process a member id runs in: a node that rejoined after a wipe is member ``n3~2`` of process ``n3``."""
    return member.split("~", 1)[0]


def operators(cluster: Cluster) -> list[str]:
    """The operators' names: the first is the active one, the rest are standbys."""
    return cluster.members(CONTROL)


def cluster_info(cluster: Cluster) -> dict[str, Any]:
    """``operators`` (addresses, for routing), ``nodes`` (name -> address), ``master`` (address and admin
    token), ``tablets`` and ``replication``."""
    shape = getattr(cluster.system, "shape", {})
    return {"operators": [cluster.address(o) for o in operators(cluster)],
            "nodes": {n: cluster.address(n) for n in cluster.nodes()},
            "master": {"addr": cluster.address("master"), "token": shape.get("token")} if "master" in cluster.specs
            else None,
            "tablets": shape.get("tablets"), "replication": shape.get("replication")}


async def node_uuid(cluster: Cluster, node: str) -> str | None:
    """The UUID in the node's instance file, once it has written one (None before, or if unreadable)."""
    raw = await cluster.backend.disk.read_file(node, "instance.json")
    if not raw:
        return None
    try:
        return str(json.loads(raw)["uuid"])
    except (ValueError, KeyError, TypeError):
        return None
