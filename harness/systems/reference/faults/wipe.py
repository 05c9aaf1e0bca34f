"""Wipe fault: kill a node, delete its data directory and start it again (amnesia).

The node must come back through the disk-loss path: a new identity, re-replicated by the control
plane, never answering under its old UUID.

A node is wiped only when the master reports every tablet whole (steady, no migration, a full acting
set, every acting member normal and alive) and the last wiped node's old identity retired. Wiping one
node while the last wipe is still being repaired is wiping a majority of some tablet, which loses
acknowledged writes in any system (it did: three wipes in 15 s of a three-node cluster, before the
master had replaced the first, emptied every tablet).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from harness.capabilities import DISK, PROCESSES
from harness.cluster import Cluster
from harness.protocols import FaultSpec
from harness.systems.reference.info import cluster_info, node_uuid
from harness.systems.reference.master import master_status
from system.wire import ConnectionLost, RpcError, Unreachable


class WipeNemesis:
    """Wipe one node's disk; the window's end is when the node has been restarted."""

    name = "wipe"
    color = "#2e86ab"
    needs = frozenset({PROCESSES, DISK})

    def __init__(self) -> None:
        self._replacing: set[str] = set()
        """Member ids of the node this fault wiped last, until no tablet still counts on them."""

    def targets(self) -> Sequence[str]:
        """Only one node at a time: wiping a majority loses acknowledged data by design."""
        return ("one",)

    async def start(self, cluster: Cluster, spec: FaultSpec, rng: random.Random) -> dict[str, Any]:
        """Wipe one random node, if every tablet is whole."""
        status: dict[str, Any] | None = None
        if cluster_info(cluster).get("master"):
            try:
                status = await master_status(cluster)
            except (TimeoutError, OSError, RpcError, ConnectionLost, Unreachable) as e:
                return {"target": spec.target, "skipped": f"the master did not answer ({type(e).__name__})"}
            why_not = unrepaired(status, self._replacing)
            if why_not is not None:
                return {"target": spec.target, "skipped": why_not}
        node = rng.choice(sorted(cluster.nodes()))
        if status is not None:
            self._replacing = {m for m, rec in status.get("members", {}).items()
                               if rec.get("name") == node and rec.get("state") != "left"}
        old_uuid = await node_uuid(cluster, node)
        await cluster.wipe(node)
        return {"target": spec.target, "wiped": [node], "old_uuids": {node: old_uuid}}

    async def stop(self, cluster: Cluster) -> dict[str, Any]:
        """Nothing to undo: the wiped node was restarted as part of the wipe."""
        return {}

    async def heal(self, cluster: Cluster) -> None:
        """Nothing to undo."""


def unrepaired(status: dict[str, Any], replacing: set[str]) -> str | None:
    """Why wiping a node now could wipe a majority of some tablet, or None when the master's ``status``
    shows every tablet whole and no acting set still holds a member of ``replacing`` (the last wiped
    node's old identities, which the master retires only when the node rejoins)."""
    members = status.get("members") or {}
    for m in sorted(replacing):
        if (members.get(m) or {}).get("state") != "left":
            return f"the last wiped node's old identity {m} has not been retired yet"
    for t, tab in sorted(status.get("tablets", {}).items()):
        acting = list(tab.get("acting") or [])
        if tab.get("status") != "steady" or tab.get("migration") or len(acting) < int(tab.get("rf") or 0):
            return f"tablet {t} is not whole yet (status {tab.get('status')}, acting {acting}, rf {tab.get('rf')})"
        gone = [m for m in acting if (members.get(m) or {}).get("state") != "normal"
                or not (members.get(m) or {}).get("alive")]
        if gone:
            return f"tablet {t} still has replicas on members {gone}, which are dead or retired"
    return None


def package() -> WipeNemesis:
    """The wipe fault package."""
    return WipeNemesis()
