"""A leader's follow cursor: streams log entries to one follower and tracks what it confirmed.

As in Oxia, the leader streams: it sends a batch as soon as there are entries, without waiting for the
replies to earlier ones, up to :data:`WINDOW` batches in flight on the one connection. The follower's
replies are cumulative: each names its head once the batch is durable, and ``confirmed`` is the highest
head named. A batch can be lost on the way while later ones arrive (the connection broke with it in
flight and the next call opened a new one, or a lossy link dropped it), so the follower must refuse a
batch that does not continue its log exactly (:func:`system.rules.continues_log`, Oxia #1239); the
refusal, or any transport error or timeout, makes the cursor abandon the stream and sync again.

Syncing: the cursor learns the follower's head (given by the operator, or probed), applies
:func:`system.rules.truncation_point`, sends a Truncate Request if needed, and only then streams again.
Replies to an abandoned stream's requests are ignored. Batches grow under load, which makes the
followers' fsyncs group commits.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

from system import rules
from system.failures import watch
from system.rules import EntryId
from system.wire import ConnectionLost, RpcError, RpcPool, Unreachable

if TYPE_CHECKING:
    from system.leader import LeaderRole

MAX_BATCH = 512
WINDOW = 4
HEARTBEAT_S = 0.5  # pragma: no mutate
RPC_TIMEOUT_S = 5.0  # pragma: no mutate


class FollowCursor:
    """Replicates the leader's log to one follower.

    Attributes:
        confirmed: the highest offset the follower reported durable in the current stream (-1 if none).
        pushed: the last offset sent in the current stream.
        synced: True while streaming (the follower's head is known); only then does ``confirmed`` count.
        wake: set when there is something to send (an append, a commit, a reply).
    """

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
        self._stream = 0  # bumped whenever a stream is abandoned: its replies are then ignored
        self._inflight: set[asyncio.Task[None]] = set()
        self._failure: Exception | None = None
        self.wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start streaming in the background."""
        self._task = watch(asyncio.create_task(self._run()), f"the cursor to {self.node_id}")

    def stop(self) -> None:
        """Deactivate the cursor; it no longer counts towards the commit index."""
        self._stopped = True
        self.synced = False
        self.confirmed = -1
        self._abandon()
        if self._task is not None:
            self._task.cancel()

    def _abandon(self) -> None:
        """Forget the stream in flight: its requests are cancelled here and their replies ignored."""
        self._stream += 1
        self._failure = None
        for t in self._inflight:
            t.cancel()
        self._inflight.clear()

    async def _call(self, method: str, params: dict[str, Any]) -> Any:
        r = self.role.replica
        base = {"tablet": r.tablet, "epoch": r.epoch, "leader": r.node_id}
        return await self.pool.call(self.addr["host"], int(self.addr["port"]), method, self.addr["uuid"],
                                    {**base, **params}, timeout=RPC_TIMEOUT_S)

    async def _sync(self) -> None:
        r = self.role.replica
        self._abandon()
        # A head the operator or a refusal reported is true only at that moment: use it once, probe later.
        # It only saves the probe when no truncation follows from it: batches of a cursor this one replaced
        # may have landed since, and a cut computed from the old head would reach below the follower's
        # commit index.
        head, self._known_head = self._known_head, None
        if head is None or rules.truncation_point([e["e"] for e in r.log], head) is not None:
            reply = await self._call("add_entries", {"prev": None, "entries": [], "commit": r.commit})
            head = rules.eid(reply["head"])
        point = rules.truncation_point([e["e"] for e in r.log], head)
        if point is not None:
            reply = await self._call("truncate", {"point": list(point)})
            head = rules.eid(reply["head"])
        if head[1] >= len(r.log) or r.entry_id(head[1]) != head:
            raise RpcError("log_mismatch", f"follower head {list(head)} is not in the leader's log")
        self.pushed = self.confirmed = head[1]
        self._sent_commit = -2
        self.synced = True
        self.role.replica.events.emit("cursor_active", tablet=r.tablet, follower=self.node_id, head=list(head))
        self.role.on_progress()

    def _has_work(self) -> bool:
        r = self.role.replica
        return self.pushed < len(r.log) - 1 or self._sent_commit < r.commit

    def _send(self) -> None:
        """Send the next batch (empty: a heartbeat carrying the commit index) without waiting for it."""
        r = self.role.replica
        start = self.pushed + 1
        batch = r.log[start: start + MAX_BATCH]
        prev, commit = list(r.entry_id(self.pushed)), r.commit
        self.pushed += len(batch)
        self._sent_commit = commit
        # Tasks start in creation order and write their frame before their first wait, so batches go out
        # in order on the one connection.
        task = asyncio.create_task(self._push(self._stream, prev, batch, commit))
        self._inflight.add(task)
        task.add_done_callback(self._inflight.discard)

    async def _push(self, stream: int, prev: list[int], batch: list[dict[str, Any]], commit: int) -> None:
        try:
            reply = await self._call("add_entries", {"prev": prev, "entries": batch, "commit": commit})
        except asyncio.CancelledError:
            raise
        except Exception as e:
            if stream == self._stream and self._failure is None:
                self._failure = e
                self.wake.set()
            return
        if stream != self._stream or self._stopped:
            return
        head = rules.eid(reply["head"])
        self.confirmed = max(self.confirmed, min(head[1], len(self.role.replica.log) - 1))
        self.role.on_progress()
        self.wake.set()

    async def _idle(self) -> bool:
        """Wait to be woken or for the heartbeat interval; True if a heartbeat is due."""
        self.wake.clear()
        woken = False
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.wake.wait(), HEARTBEAT_S)  # pragma: no mutate
            woken = True
        return not woken and not self._inflight

    async def _run(self) -> None:
        backoff = 0.05  # pragma: no mutate
        # Checked as well as cancelled: Python 3.11's wait_for swallows a cancel that lands as the wake
        # event fires (a reconfiguration stops a cursor and appends at once), and the cursor ran on.
        while not self._stopped:
            try:
                if self._failure is not None:
                    raise self._failure
                if not self.synced:
                    await self._sync()
                    backoff = 0.05  # pragma: no mutate
                if len(self._inflight) >= WINDOW or not self._has_work():
                    heartbeat = await self._idle()
                    if self._stopped:
                        return
                    if not heartbeat and (len(self._inflight) >= WINDOW or not self._has_work()):
                        continue
                    if self._failure is not None:
                        continue
                self._send()
            except asyncio.CancelledError:
                raise
            except RpcError as e:
                self._resync(e.data["head"] if e.code == "log_mismatch" and "head" in e.data else None)
                if e.code == "stale_epoch":
                    self.role.on_stale(self.node_id, int(e.data.get("epoch", -1)))
                await asyncio.sleep(backoff)  # pragma: no mutate
                backoff = min(backoff * 2, 1.0)  # pragma: no mutate
            except (TimeoutError, Unreachable, ConnectionLost, OSError):
                self._resync(None)
                await asyncio.sleep(backoff)  # pragma: no mutate
                backoff = min(backoff * 2, 1.0)  # pragma: no mutate

    def _resync(self, head: Any) -> None:
        """After an error: stop counting this follower, drop the stream, sync from ``head`` (or a probe)."""
        self.synced = False
        self._abandon()
        self._known_head = rules.eid(head) if head is not None else None
