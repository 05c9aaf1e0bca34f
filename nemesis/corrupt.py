"""Corrupt fault: kill a node, damage one of its tablets' files, start it again.

Truncating or bit-flipping the WAL: the node must detect the damage by its checksums at start and
refuse to serve the damaged tablet (the control plane then repairs it by tablet copy). Deleting the
consensus metadata: the node must treat it as disk loss and refuse to start under its UUID; the
backend then reformats it and it rejoins as a new node. Either way it must never serve wrong data or
drop an acknowledged entry. The window's end has nothing to undo.

One damaged disk at a time: a window first waits (up to ``SETTLE_S``) until every tablet has a leader
with a full, synced ensemble again, and is skipped, saying so, if the cluster is still repairing the
last damage. Destroying a second replica of a tablet before the first is re-copied exceeds what a
replication factor of 3 tolerates (a majority of copies gone), and losing those writes is then no bug.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Sequence
from typing import Any

from harness.backends.file_damage import KINDS
from harness.protocols import Backend, FaultSpec
from system.admin import call

SETTLE_S = 30.0


async def healthy_tablets(backend: Backend) -> set[str]:
    """The tablets whose leader reports a full ensemble (the replication factor), every follower synced,
    and no catch-up member: each of their replicas holds the data, so one may be damaged."""
    info = backend.cluster_info()
    rf = int(info.get("replication") or 3)
    healthy: set[str] = set()
    for host, port in info.get("nodes", {}).values():
        try:
            hello = await call(host, int(port), "hello", {}, timeout=2.0)
        except Exception:  # a node that is down leads nothing
            continue
        for t, rep in hello.get("tablets", {}).items():
            ensemble = set(rep.get("ensemble") or [])
            if (rep.get("status") == "leader" and len(ensemble) == rf and not rep.get("pre_voters")
                    and set(rep.get("followers") or []) >= ensemble - {hello.get("member")}):
                healthy.add(t)
    return healthy


async def wait_healthy(backend: Backend, timeout: float = SETTLE_S) -> bool:
    """Wait until every tablet is healthy (:func:`healthy_tablets`); False if it has not happened in time."""
    deadline = time.monotonic() + timeout
    while True:
        if len(await healthy_tablets(backend)) >= int(backend.cluster_info().get("tablets") or 0):
            return True
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(0.5)


class CorruptNemesis:
    """Damage one node's WAL on disk."""

    name = "corrupt"
    color = "#6a4c93"

    def targets(self) -> Sequence[str]:
        """truncate (a torn tail), bitflip (a checksum mismatch) or delete-metadata (lost consensus metadata)."""
        return KINDS

    async def start(self, backend: Backend, spec: FaultSpec, rng: random.Random) -> dict[str, Any]:
        """Damage a random node's tablet files and restart the node, once the last damage is repaired."""
        node = rng.choice(sorted(backend.nodes()))
        if not await wait_healthy(backend):
            return {"target": spec.target, "skipped": f"a tablet still lacks a full, synced ensemble after "
                    f"{SETTLE_S:.0f} s: damaging another replica could destroy a majority of its copies"}
        return {"target": spec.target, **await backend.damage_wal(node, spec.target, rng)}

    async def stop(self, backend: Backend) -> dict[str, Any]:
        """Nothing to undo: the node restarted as part of the fault."""
        return {}

    async def heal(self, backend: Backend) -> None:
        """Nothing to undo."""


def package() -> CorruptNemesis:
    """The corrupt fault package."""
    return CorruptNemesis()
