"""The node's side of the join procedure (Scylla seed): ask the master until it answers.

A node that has not joined sends ``join`` (cluster id, secret token, UUID, name, address) to the
master, retrying while the master is unreachable. Accepted, it records its member id and ``joined``
in its instance file and never asks again. A definite refusal (wrong cluster, bad token, a UUID that
was removed) is final: the node logs why and stops. ``already_member`` means an earlier answer was
lost; the node takes the member id it names.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

from system import identity, statefile
from system.wire import ConnectionLost, RpcConnection, RpcError, Unreachable

if TYPE_CHECKING:
    from system.node import Node

RETRY_S = 0.5
FINAL_REFUSALS = ("wrong_cluster", "bad_token", "removed")


def read_cluster_file(path: str | None) -> dict[str, Any]:
    """The cluster id and token the launcher wrote (empty if no file)."""
    return dict(statefile.read_json(path) or {}) if path else {}


class Joiner:
    """Runs the join procedure for one node."""

    def __init__(self, node: Node, master: str, cluster_file: str | None, host: str, port: int,
                 stop: asyncio.Event) -> None:
        h, _, p = master.rpartition(":")
        self.master = (h, int(p))
        self.node = node
        self.secret = read_cluster_file(cluster_file)
        self.host, self.port = host, port
        self.stop = stop
        self.refused: str | None = None

    async def run(self) -> None:
        """Join unless already joined; set ``stop`` on a definite refusal."""
        if self.node.ident.joined:
            return
        while True:
            try:
                reply = await self._ask()
            except RpcError as e:
                if e.code == "already_member" and e.data.get("member"):
                    self._joined(str(e.data["member"]), self.node.uuid, "already a member")
                    return
                if e.code not in FINAL_REFUSALS:
                    await asyncio.sleep(RETRY_S)
                    continue
                self.refused = f"{e.code}: {e.message}"
                self.node.events.emit("join_refused", uuid=self.node.uuid, error=e.code, reason=e.message)
                print(f"node {self.node.id}: join refused ({self.refused}); staying offline", flush=True)
                self.stop.set()
                return
            except (Unreachable, ConnectionLost, TimeoutError, OSError):
                await asyncio.sleep(RETRY_S)
                continue
            self._joined(str(reply["member"]), str(reply["uuid"]), str(reply.get("how", "joined")))
            return

    async def _ask(self) -> Any:
        conn = RpcConnection(*self.master)
        try:
            return await conn.call("join", None, {
                "cluster_id": self.secret.get("cluster_id"), "token": self.secret.get("token"),
                "uuid": self.node.uuid, "name": self.node.id, "host": self.host, "port": self.port}, timeout=5.0)
        finally:
            with contextlib.suppress(Exception):
                await conn.close()

    def _joined(self, member: str, uuid: str, how: str) -> None:
        ident = identity.Identity(uuid=uuid, id=self.node.id, member=member,
                                  cluster_id=self.secret.get("cluster_id"), joined=True)
        identity.save(self.node.dir, ident)
        if uuid != self.node.uuid:  # only under bug no-uuid-check: the master handed back an old UUID
            statefile.write_atomic(f"{self.node.dir}/tablets/FORMAT", {"uuid": uuid})
        self.node.set_identity(ident)
        self.node.events.emit("joined", uuid=uuid, member=member, how=how)
