"""etcd's membership State: members removed and added back while the test runs, as Jepsen's member nemesis does.

A window's ``remove`` takes a member out with etcd's member remove (never below a majority of the
configured members), stops it and erases its data, since a removed member can never come back with it.
The window's end adds every removed member back: member add, then a start with an empty data directory
and ``--initial-cluster-state existing``. The heal step does the same and waits until every member is
healthy again.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from fencepost_etcd.gateway import Definite, Indefinite

if TYPE_CHECKING:
    from fencepost import ClusterView
    from fencepost_etcd.plugin import EtcdPlugin

SETTLE_S = 60.0
REMOVE_PATIENCE_S = 10.0
log = logging.getLogger(__name__)


class EtcdMembership:
    """Remove members and add them back (a Membership State)."""

    def __init__(self, plugin: EtcdPlugin) -> None:
        self.plugin = plugin
        self.removed: list[str] = []

    def changes(self) -> Sequence[str]:
        """Only ``remove``: the window's end adds the member back."""
        return ("remove",)

    async def change(self, cluster: ClusterView, kind: str, rng: random.Random) -> dict[str, Any]:
        """Remove a random member, unless that would leave no majority of the configured members."""
        members = [n for n in cluster.nodes() if n not in self.removed]
        if len(members) - 1 <= len(cluster.nodes()) // 2:
            return {"skipped": f"removing one of {members} would leave no majority of {len(cluster.nodes())}"}
        node = rng.choice(members)
        ids = await self.plugin.member_ids(cluster, exclude=[node])
        if node not in ids:
            return {"skipped": f"{node} is not a member now"}
        try:
            await self.plugin.patiently(cluster, lambda g: g.remove_member(ids[node]), [node], REMOVE_PATIENCE_S)
        except Definite as e:
            return {"skipped": f"etcd refused to remove {node}: {e}"}
        self.removed.append(node)
        await cluster.processes.kill(node)
        await cluster.disk.erase(node)
        return {"removed": node, "member_id": ids[node]}

    async def restore(self, cluster: ClusterView) -> dict[str, Any]:
        """Add every removed member back, each as a new member on an empty disk."""
        added = []
        while self.removed:
            node = self.removed[0]
            extra = await self.plugin.add_back(cluster, node)
            self.removed.pop(0)
            await cluster.processes.start(node, extra)
            added.append(node)
        return {"added": added}

    async def settle(self, cluster: ClusterView) -> None:
        """Add the removed members back and wait (bounded) until every member answers with one leader; what
        could not be done is logged, and the test goes on to its final reads."""
        deadline = time.monotonic() + SETTLE_S
        while self.removed and time.monotonic() < deadline:
            try:
                await self.restore(cluster)
            except (Definite, Indefinite) as e:
                log.warning("membership: adding %s back failed: %s", self.removed, e)
                await asyncio.sleep(1.0)
        try:
            await self.plugin.ready(cluster, max(1.0, deadline - time.monotonic()))
        except TimeoutError as e:
            log.warning("membership: the cluster did not settle: %s", e)
