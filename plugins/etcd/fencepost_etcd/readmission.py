"""Bringing a member back after it lost its disk (a wipe, or a membership remove): as etcd requires, its
old identity is removed, a new member is added for its peer URL, and the node starts on an empty disk with
``--initial-cluster-state existing`` until it serves.

Every step is retried until the cluster answers or :data:`PATIENCE_S` has passed: just after a wipe the
cluster may have no quorum (the wiped member down and the leader cut off by a partition in the other
lane), and etcd refuses a reconfiguration for a while after a member started. An attempt nobody knows the
outcome of (a timeout) is settled by reading the member list again, never assumed. The node is killed and
its disk erased again just before its start, since another fault (a kill's end, a power loss of every
node) may have started it meanwhile with its first arguments, which cannot work on an empty disk; and it
is started again while it exits (cut off from every peer, etcd cannot fetch the member list and exits).

A node stays *pending* from the moment it must come back until it serves; while any is, no other member
may be wiped or removed, and the membership heal brings back whatever a step gave up on.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from fencepost_etcd.gateway import Definite, Gateway, Indefinite

if TYPE_CHECKING:
    from fencepost import ClusterView
    from fencepost_etcd.plugin import EtcdPlugin

PATIENCE_S = 60.0
"""How long one bring-back keeps trying before it gives up, saying why."""
RETRY_S = 0.5


class NotRejoined(Exception):
    """A node could not be brought back within the patience; it stays pending."""


class Readmission:
    """The nodes that must come back as new members, and the step that brings one back."""

    def __init__(self, plugin: EtcdPlugin) -> None:
        self.plugin = plugin
        self.pending: set[str] = set()
        """Nodes whose disk is lost (wiped, or removed by the membership fault) and that do not serve yet."""
        self._locks: dict[str, asyncio.Lock] = {}
        self._args: dict[str, list[str]] = {}

    async def bring_back(self, cluster: ClusterView, node: str, patience: float = PATIENCE_S) -> list[str]:
        """Bring ``node`` back, once :attr:`pending`, as a new member on an empty disk, started and serving;
        the start arguments that joined it. Two calls for one node run one after the other, and the second
        finds it done.

        Raises:
            NotRejoined: it did not come back within ``patience`` seconds (it stays pending).
        """
        async with self._locks.setdefault(node, asyncio.Lock()):
            if node not in self.pending or await self._serves(cluster, node):
                self.pending.discard(node)
                return self._args.get(node, [])
            deadline = time.monotonic() + patience
            await cluster.processes.kill(node)  # it stays down while its identity changes
            args = await self._reconfigure(cluster, node, deadline)
            self._args[node] = args
            await cluster.processes.kill(node)  # another fault may have started it meanwhile
            await cluster.disk.erase(node)
            await self._start(cluster, node, args, deadline)
            self.pending.discard(node)
            return args

    async def _reconfigure(self, cluster: ClusterView, node: str, deadline: float) -> list[str]:
        """Remove every member with ``node``'s peer URL (its old identity, or a new one an add that timed
        out made after all), then add one; the start arguments for the cluster as that add left it."""
        url = self.plugin.peer_urls[node]
        gone: set[str] = set()  # removed, though a member cut off may still list them
        while True:
            try:
                members = await self.plugin.any_member(cluster, lambda g: g.members(), exclude=[node])
                stale = [str(m["ID"]) for m in members
                         if url in (m.get("peerURLs") or []) and str(m["ID"]) not in gone]
                for member_id in stale:
                    await self._remove(cluster, node, member_id)
                    gone.add(member_id)
                answer = await self.plugin.any_member(cluster, lambda g: g.add_member(url), exclude=[node])
                return self._join_args(answer.get("members") or [])
            except (Definite, Indefinite) as e:  # no quorum, a refusal just now, or an outcome unknown
                if time.monotonic() > deadline:
                    raise NotRejoined(f"{node} is stopped, not yet added back as a new member: {e}") from None
                await asyncio.sleep(RETRY_S)

    async def _remove(self, cluster: ClusterView, node: str, member_id: str) -> None:
        try:
            await self.plugin.any_member(cluster, lambda g: g.remove_member(member_id), exclude=[node])
        except Definite as e:
            if "member not found" not in str(e):  # already removed (an earlier try that timed out)
                raise

    def _join_args(self, members: Sequence[dict[str, Any]]) -> list[str]:
        by_url = {url: n for n, url in self.plugin.peer_urls.items()}
        names = [by_url.get((m.get("peerURLs") or [""])[0]) for m in members]
        initial = ",".join(f"{n}={self.plugin.peer_urls[n]}" for n in names if n)
        return ["--initial-cluster-state", "existing", "--initial-cluster", initial]

    async def _start(self, cluster: ClusterView, node: str, args: list[str], deadline: float) -> None:
        """Start ``node`` with ``args``, again whenever it has exited, until it serves."""
        while True:
            if not cluster.processes.running(node):
                await cluster.processes.start(node, args)
            if await self._serves(cluster, node):
                return
            if time.monotonic() > deadline:
                raise NotRejoined(f"{node} was added back as a new member and started, but does not serve yet")
            await asyncio.sleep(RETRY_S)

    async def _serves(self, cluster: ClusterView, node: str) -> bool:
        """Whether ``node`` answers its status (etcd serves clients only once a member has joined)."""
        host, port = cluster.address(node)
        g = Gateway(f"http://{host}:{port}", 1.0)
        try:
            await g.status()
            return True
        except (Definite, Indefinite):
            return False
        finally:
            await g.close()
