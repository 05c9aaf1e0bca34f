"""etcd's membership State: members removed and added back while the test runs, as Jepsen's member nemesis does.

A window's ``remove`` takes a member out with etcd's member remove (never below a majority of the
configured members, nor while another member has yet to come back), stops it and erases its data, since a
removed member can never come back with it. The window's end brings every removed member back
(:mod:`.readmission`: member add, then a start with an empty data directory and ``--initial-cluster-state
existing``), and says which it could not. The heal step brings back every member still pending, a wiped
one among them, and waits until every member is healthy again.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from fencepost_etcd.gateway import Definite, Indefinite
from fencepost_etcd.readmission import NotRejoined

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
        """Remove a random member, unless that would leave no majority of the configured members. A remove
        whose outcome nobody knows counts as done: the member comes back as a new one either way."""
        pending = self.plugin.readmission.pending
        if pending:
            return {"skipped": f"members {sorted(pending)} have not come back yet"}
        members = cluster.nodes()
        if len(members) - 1 <= len(members) // 2:
            return {"skipped": f"removing one of {members} would leave no majority of {len(members)}"}
        node = rng.choice(members)
        try:
            ids = await self.plugin.member_ids(cluster, exclude=[node])
        except (Definite, Indefinite) as e:
            return {"skipped": f"no member listed the members: {e}"}
        if node not in ids:
            return {"skipped": f"{node} is not a member now"}
        done: dict[str, Any] = {"removed": node, "member_id": ids[node]}
        try:
            await self.plugin.patiently(cluster, lambda g: g.remove_member(ids[node]), [node], REMOVE_PATIENCE_S)
        except Definite as e:
            return {"skipped": f"etcd refused to remove {node}: {e}"}
        except Indefinite as e:
            done["outcome_unknown"] = str(e)
        pending.add(node)
        self.removed.append(node)
        await cluster.processes.kill(node)
        await cluster.disk.erase(node)
        return done

    async def restore(self, cluster: ClusterView) -> dict[str, Any]:
        """Bring every removed member back, each as a new member on an empty disk; say which could not be."""
        added, not_added = [], {}
        for node in list(self.removed):
            try:
                await self.plugin.readmission.bring_back(cluster, node)
                added.append(node)
            except NotRejoined as e:
                not_added[node] = str(e)
            else:
                self.removed.remove(node)
        return {"added": added, **({"not_added": not_added} if not_added else {})}

    async def settle(self, cluster: ClusterView) -> None:
        """Bring back every pending member (removed or wiped) and wait (bounded) until every member answers
        with one leader; what could not be done is logged, and the test goes on to its final reads."""
        deadline = time.monotonic() + SETTLE_S
        readmission = self.plugin.readmission
        while readmission.pending and time.monotonic() < deadline:
            for node in sorted(readmission.pending):
                try:
                    await readmission.bring_back(cluster, node, max(1.0, deadline - time.monotonic()))
                except NotRejoined as e:
                    log.warning("membership: bringing %s back failed: %s", node, e)
                    await asyncio.sleep(1.0)
        self.removed = [n for n in self.removed if n in readmission.pending]
        try:
            await self.plugin.ready(cluster, max(1.0, deadline - time.monotonic()))
        except TimeoutError as e:
            log.warning("membership: the cluster did not settle: %s", e)
