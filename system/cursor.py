"""A leader's follow cursor: streams log entries to one follower and tracks what it confirmed.

On start (and after any transport error) the cursor syncs: it learns the follower's head (given by
the operator, or probed), applies :func:`system.rules.truncation_point`, sends a Truncate Request if
needed, and only then streams. One batch is in flight at a time; batches grow under load, which makes
the followers' fsyncs group commits.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

from system import rules
from system.rules import EntryId
from system.wire import ConnectionLost, RpcError, RpcPool, Unreachable

if TYPE_CHECKING:
    from system.leader import LeaderRole

MAX_BATCH = 512
HEARTBEAT_S = 0.5
RPC_TIMEOUT_S = 5.0


class FollowCursor:
    """Replicates the leader's log to one follower."""

    def __init__(self, role: LeaderRole, node_id: str, addr: dict[str, Any], head: EntryId | None,
                 pool: RpcPool) -> None:
        self.role = role
        self.node_id = node_id
        self.addr = addr
        self.pool = pool
        self.confirmed = -1
        self.pushed = -1
        self.synced = False
        self._known_head = head
        self._sent_commit = -2
        self._stopped = False
        self.wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start streaming in the background."""
        self._task = asyncio.create_task(self._run())

    def stop(self) -> None:
        """Deactivate the cursor; it no longer counts towards the commit index."""
        self._stopped = True
        self.synced = False
        self.confirmed = -1
        if self._task is not None:
            self._task.cancel()

    async def _call(self, method: str, params: dict[str, Any]) -> Any:
        r = self.role.replica
        base = {"tablet": r.tablet, "epoch": r.epoch, "leader": r.node_id}
        return await self.pool.call(self.addr["host"], int(self.addr["port"]), method, self.addr["uuid"],
                                    {**base, **params}, timeout=RPC_TIMEOUT_S)

    async def _sync(self) -> None:
        r = self.role.replica
        # A head the operator or a refusal reported is true only at that moment: use it once, probe later.
        head, self._known_head = self._known_head, None
        if head is None:
            reply = await self._call("add_entries", {"prev": None, "entries": [], "commit": r.commit})
            head = rules.eid(reply["head"])
        point = rules.truncation_point([e["e"] for e in r.log], head)
        if point is not None:
            reply = await self._call("truncate", {"point": list(point)})
            head = rules.eid(reply["head"])
        if head[1] >= len(r.log) or r.entry_id(head[1]) != head:
            raise RpcError("log_mismatch", f"follower head {list(head)} is not in the leader's log")
        self.pushed = self.confirmed = head[1]
        self.synced = True
        self.role.replica.events.emit("cursor_active", tablet=r.tablet, follower=self.node_id, head=list(head))
        self.role.on_progress()

    async def _run(self) -> None:
        r = self.role.replica
        backoff = 0.05
        # Checked as well as cancelled: Python 3.11's wait_for swallows a cancel that lands as the wake
        # event fires (a reconfiguration stops a cursor and appends at once), and the cursor ran on.
        while not self._stopped:
            try:
                if not self.synced:
                    await self._sync()
                    backoff = 0.05
                if self.pushed >= len(r.log) - 1 and self._sent_commit >= r.commit:
                    self.wake.clear()
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(self.wake.wait(), HEARTBEAT_S)
                    if self._stopped:
                        return
                start = self.pushed + 1
                batch = r.log[start: start + MAX_BATCH]
                commit = r.commit
                reply = await self._call("add_entries", {"prev": list(r.entry_id(self.pushed)), "entries": batch,
                                                         "commit": commit})
                self._sent_commit = commit
                head = rules.eid(reply["head"])
                self.pushed = self.confirmed = max(self.confirmed, min(head[1], len(r.log) - 1))
                self.role.on_progress()
            except asyncio.CancelledError:
                raise
            except RpcError as e:
                self.synced = False
                self._known_head = rules.eid(e.data["head"]) if e.code == "log_mismatch" and "head" in e.data \
                    else None
                if e.code == "stale_epoch":
                    self.role.on_stale(self.node_id, int(e.data.get("epoch", -1)))
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 1.0)
            except (TimeoutError, Unreachable, ConnectionLost, OSError):
                self.synced = False
                self._known_head = None
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 1.0)
