"""Corrupt fault: kill a node, damage one of its tablets' files, start it again.

Truncating or bit-flipping the WAL: the node must detect the damage by its checksums at start and
refuse to serve the damaged tablet (the control plane then repairs it by tablet copy). Deleting the
consensus metadata: the node must treat it as disk loss and refuse to start under its UUID; the
cluster then reformats it and it rejoins as a new node. Either way it must never serve wrong data or
drop an acknowledged entry. The window's end has nothing to undo.

One damaged disk at a time, in the cluster's damage guard's turn (:mod:`fencepost_reference.faults.guard`):
a window first waits (up to ``SETTLE_S``) until every tablet has a leader with a full, synced ensemble
again, and is skipped, saying so, if the cluster is still repairing the last damage or another fault is
taking a replica's data right now. Destroying a second replica of a tablet before the first is re-copied exceeds what a
replication factor of 3 tolerates (a majority of copies gone), and losing those writes is then no bug.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import Sequence
from typing import Any

from fencepost import DISK, PROCESSES, ClusterView, FaultSpec
from fencepost_reference.faults.file_damage import KINDS, damage_tablet
from fencepost_reference.faults.guard import guard_of, healthy_tablets, identities
from fencepost_reference.info import cluster_info, node_uuid
from fencepost_reference.master import master_status
from system.node import EXIT_DISK_LOSS
from system.wire import ConnectionLost, RpcError, Unreachable

SETTLE_S = 30.0


async def wait_healthy(cluster: ClusterView, timeout: float = SETTLE_S) -> bool:
    """Wait until every tablet is healthy (:func:`healthy_tablets`); False if it has not happened in time."""
    deadline = time.monotonic() + timeout
    while True:
        if len(await healthy_tablets(cluster)) >= int(cluster_info(cluster).get("tablets") or 0):
            return True
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(0.5)


async def damage(cluster: ClusterView, node: str, kind: str, rng: random.Random) -> dict[str, Any]:
    """Kill ``node``, damage one of its tablets' files in place (``kind``), and start it again; say what.

    Lost consensus metadata is disk loss: the node must exit (code 3) instead of serving; it is then
    started with ``--reformat``, as an administrator would, and rejoins under a new UUID."""
    old_uuid = await node_uuid(cluster, node)
    try:  # the kill inside: a run that ends during it must still start the node again
        await cluster.processes.kill(node)
        done: dict[str, Any] = {"node": node, **await cluster.disk.edit(node, lambda d: damage_tablet(d, kind, rng))}
    finally:
        await cluster.processes.start(node)
    if kind == "delete-metadata" and done["file"] is not None:
        done["exit"] = await cluster.processes.wait_exit(node, 30.0)  # None: it is serving
        if done["exit"] == EXIT_DISK_LOSS:
            await cluster.processes.start(node, ["--reformat"])
            new_uuid = None
            for _ in range(100):  # the reformatted node writes its new identity as it starts
                new_uuid = await node_uuid(cluster, node)
                if new_uuid not in (None, old_uuid):
                    break
                await asyncio.sleep(0.1)
            done |= {"reformatted": [node], "old_uuids": {node: old_uuid}, "new_uuids": {node: new_uuid}}
        elif done["exit"] is not None:
            await cluster.processes.start(node)
    return done


class CorruptNemesis:
    """Damage one node's WAL on disk."""

    name = "corrupt"
    color = "#6a4c93"
    needs = frozenset({PROCESSES, DISK})

    def targets(self) -> Sequence[str]:
        """truncate (a torn tail), bitflip (a checksum mismatch) or delete-metadata (lost consensus metadata)."""
        return KINDS

    async def start(self, cluster: ClusterView, spec: FaultSpec, rng: random.Random) -> dict[str, Any]:
        """Damage a random node's tablet files and restart the node, once the last damage is repaired."""
        node = rng.choice(sorted(cluster.nodes()))
        guard = guard_of(cluster)
        async with guard.turn(cluster, SETTLE_S) as why:
            if why is not None:
                return {"target": spec.target, "skipped": f"{why} (after waiting up to {SETTLE_S:.0f} s)"}
            guard.damaged([node])
            members: dict[str, Any] = {}
            if cluster_info(cluster).get("master"):
                with contextlib.suppress(TimeoutError, OSError, RpcError, ConnectionLost, Unreachable):
                    members = (await master_status(cluster))["members"]
            done = await damage(cluster, node, spec.target, rng)
            if done.get("reformatted"):  # a new identity: the master retires the old one when it rejoins
                guard.replacing = identities(members, node)
            return {"target": spec.target, **done}

    async def stop(self, cluster: ClusterView) -> dict[str, Any]:
        """Nothing to undo: the node restarted as part of the fault."""
        return {}

    async def heal(self, cluster: ClusterView) -> None:
        """Nothing to undo."""


def package() -> CorruptNemesis:
    """The corrupt fault package."""
    return CorruptNemesis()
