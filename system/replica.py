"""One tablet's replica on one node: its log, consensus state, durability and the follower-side RPCs.

Statuses: ``fenced`` (replicates nothing until told), ``follower`` (accepts entries from the leader of
its epoch), ``leader`` (see :mod:`system.leader`), ``damaged`` (its files failed verification: it answers
nothing but ``dump`` and ``hello``), ``deleted`` (a tombstone: no data, but it keeps its epoch and refuses
stale leaders with it) and ``copying`` (a tablet copy is filling it; it serves nothing, but adopts a newer
epoch it is shown, as a tombstone does). After a restart a follower is still a follower of the same leader
and epoch; anything else loads as ``fenced``.

The data state (``READY``/``DELETED``/``COPYING``, Kudu seed) is in the superblock; see
:mod:`system.superblock`.

Files under ``DIR/tablets/<tablet>/``: ``wal`` (see :mod:`system.wal`) and ``state.json`` (epoch, status,
head, commit, leader, written atomically). The epoch is durable before any reply that depends on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from typing import TYPE_CHECKING, Any, NoReturn

from system import rules, statefile, superblock
from system.events import EventLog
from system.failures import watch
from system.kv import KvState
from system.rules import DELETED, NO_ENTRY, READY, EntryId
from system.wal import Entry, Wal, WalDamaged
from system.wire import RpcError

if TYPE_CHECKING:
    from system.leader import LeaderRole


class TabletReplica:
    """State and follower-side behaviour of one tablet replica."""

    def __init__(self, tablet: int, directory: str, node_id: str, events: EventLog) -> None:
        self.tablet = tablet
        self.dir = directory
        self.node_id = node_id
        self.events = events
        self.status = "fenced"
        self.data_state = READY
        self.last_entry: list[int] | None = None
        self.session: int | None = None
        self.epoch = -1
        self.leader_id: str | None = None
        self.log: list[Entry] = []
        self.durable = -1
        self.commit = -1
        self.kv = KvState()
        self.results: dict[int, dict[str, Any]] = {}
        self.damage: str | None = None
        self.wal: Wal | None = None
        self.role: LeaderRole | None = None
        self.replaced = False  # a copy (done or failed) swapped in a new object for this tablet: see _refuse_copying
        self.lock = asyncio.Lock()
        self._state_lock = asyncio.Lock()
        self._persisted_commit = -1
        self._sync_wanted = asyncio.Event()
        self._synced = asyncio.Event()
        self._unwritten: list[Entry] = []
        self._flusher: asyncio.Task[None] | None = None

    # --- loading and persistence ----------------------------------------------------------------------

    @property
    def data_dir(self) -> str:
        """The node's data directory (where the quarantine lives)."""
        return os.path.dirname(os.path.dirname(self.dir))

    @classmethod
    def load(cls, tablet: int, directory: str, node_id: str, events: EventLog) -> TabletReplica:
        """Open a replica whose superblock :func:`system.superblock.startup` has made consistent:
        a tombstone, or a READY replica; damage is recorded in ``status``/``damage``, never repaired."""
        r = cls(tablet, directory, node_id, events)
        sb = superblock.read(directory) or {"state": READY}
        state = statefile.read_json(os.path.join(directory, "state.json")) or {}
        r.epoch = int(state.get("epoch", -1))
        r.session = sb.get("session")
        if sb["state"] == DELETED:
            r.data_state, r.status, r.leader_id = DELETED, "deleted", None
            r.last_entry = sb.get("last_entry")
            events.emit("tablet_loaded", tablet=tablet, state=DELETED, epoch=r.epoch, last_entry=r.last_entry)
            return r
        r.leader_id = state.get("leader")
        # A follower stays one (its leader's cursor will resync it); a leader comes back fenced, since
        # its cursors and in-flight writes are gone.
        r.status = "follower" if state.get("status") == "follower" and r.leader_id else "fenced"
        durable_commit = int(state.get("commit", -1))
        try:
            r.wal, r.log = Wal.open(os.path.join(directory, "wal"))
        except WalDamaged as e:
            r.mark_damaged(f"wal: {e}")
            return r
        r.durable = len(r.log) - 1
        if r.durable < durable_commit:
            r.mark_damaged(f"log ends at offset {r.durable}, below the durable commit index {durable_commit}",
                           log_end=r.durable, durable_commit=durable_commit)
            return r
        r.commit = durable_commit
        r._persisted_commit = durable_commit
        snap = statefile.read_json(os.path.join(directory, "snapshot.json"))
        if snap and -1 <= int(snap["applied"]) <= durable_commit:
            r.kv.data, r.kv.applied = dict(snap["kv"]), int(snap["applied"])
        for entry in r.log[r.kv.applied + 1: durable_commit + 1]:
            r.kv.apply(entry["o"], entry["v"])
        events.emit("tablet_loaded", tablet=tablet, state=READY, epoch=r.epoch, head=list(r.head), commit=r.commit,
                    was=state.get("status"))
        return r

    @classmethod
    def create(cls, tablet: int, directory: str, node_id: str, events: EventLog) -> TabletReplica:
        """Create an empty replica on disk."""
        os.makedirs(directory, exist_ok=True)
        statefile.write_consensus_meta(os.path.join(directory, "state.json"),
                               {"epoch": -1, "status": "fenced", "head": list(NO_ENTRY), "commit": -1,
                                "leader": None})
        superblock.write(directory, READY)
        events.emit("tablet_created", tablet=tablet)
        events.emit("tablet_state", tablet=tablet, state=READY, was="DOES_NOT_EXIST", why="created")
        return cls.load(tablet, directory, node_id, events)

    def mark_damaged(self, reason: str, **facts: Any) -> None:
        """Refuse to serve this tablet from now on; ``facts`` go into the event (e.g. ``log_end`` and
        ``durable_commit`` when committed entries are missing)."""
        self.status = "damaged"
        self.damage = reason
        self.events.emit("tablet_damaged", tablet=self.tablet, reason=reason, **facts)

    def state_record(self) -> dict[str, Any]:
        """The consensus state as written to ``state.json``.

        The commit index written is capped at this replica's durable head: a leader may commit an entry
        that two followers hold durably before its own fsync ends, and a checkpoint above its own durable
        log would make a power loss look like lost committed data. So a log found shorter than its
        checkpointed commit index always means fsynced entries were lost."""
        return {"epoch": self.epoch, "status": self.status, "head": list(self.head),
                "commit": self.durable_commit(), "leader": self.leader_id}

    def durable_commit(self) -> int:
        """The commit index, capped at the durable head: what a checkpoint may claim."""
        return min(self.commit, self.durable)

    async def persist(self) -> None:
        """Write ``state.json`` atomically with the current state (ordered across callers)."""
        async with self._state_lock:
            rec = self.state_record()
            await asyncio.to_thread(statefile.write_consensus_meta, os.path.join(self.dir, "state.json"), rec)
            self._persisted_commit = max(self._persisted_commit, rec["commit"])

    async def set_epoch_durably(self, epoch: int) -> None:
        """Adopt ``epoch`` and write it before any other coroutine can append under it."""
        async with self._state_lock:
            self.epoch = epoch
            statefile.write_consensus_meta(os.path.join(self.dir, "state.json"), self.state_record())
        self.events.emit("epoch_adopted", tablet=self.tablet, epoch=epoch, status=self.status)

    async def persist_commit_if_moved(self) -> None:
        """Background checkpoint of the commit index (it is not needed on the write path)."""
        if self.status != "damaged" and self.durable_commit() > self._persisted_commit:
            await self.persist()

    # --- log, durability, apply -----------------------------------------------------------------------

    @property
    def head(self) -> EntryId:
        """The last entry id in the log."""
        return (self.log[-1]["e"], self.log[-1]["o"]) if self.log else NO_ENTRY

    def entry_id(self, offset: int) -> EntryId:
        """The id of the entry at ``offset`` (NO_ENTRY for -1)."""
        return (self.log[offset]["e"], offset) if offset >= 0 else NO_ENTRY

    def append_local(self, entries: list[Entry]) -> None:
        """Add entries to the log; they are written and fsynced by the flusher (group commit)."""
        self.log.extend(entries)
        self._unwritten.extend(entries)
        self._sync_wanted.set()
        if self._flusher is None:
            self._flusher = watch(asyncio.create_task(self._flush_loop()), f"tablet {self.tablet}'s WAL flusher")

    async def wait_durable(self, offset: int) -> None:
        """Wait until the log is fsynced at least to ``offset``."""
        while self.durable < offset:
            if self.status == "damaged":
                raise RpcError("tablet_damaged", self.damage or "")
            self._sync_wanted.set()
            self._synced.clear()
            await self._synced.wait()

    async def _flush_loop(self) -> None:
        while True:
            await self._sync_wanted.wait()
            self._sync_wanted.clear()
            batch, self._unwritten = self._unwritten, []
            target = len(self.log) - 1
            wal = self.wal
            assert wal is not None
            try:
                await asyncio.to_thread(self._write_and_sync, wal, batch)
            except OSError as e:
                self.mark_damaged(f"wal write failed: {e}")
                self._synced.set()
                return
            self.durable = max(self.durable, min(target, len(self.log) - 1))
            self._synced.set()
            if self.role is not None:
                self.role.on_progress()

    @staticmethod
    def _write_and_sync(wal: Wal, batch: list[Entry]) -> None:
        wal.append(batch)
        wal.sync()

    def advance_commit(self, new_commit: int) -> None:
        """Move the commit index forward and apply the newly committed entries, in order."""
        new_commit = min(new_commit, len(self.log) - 1)
        if new_commit <= self.commit:
            return
        keep = self.role is not None
        for off in range(self.commit + 1, new_commit + 1):
            result = self.kv.apply(off, self.log[off]["v"])
            if keep:
                self.results[off] = result
        self.events.emit("commit", tablet=self.tablet, epoch=self.epoch, commit=new_commit,
                         entry=list(self.entry_id(new_commit)), leader=keep)
        self.commit = new_commit

    # --- RPCs common to every role --------------------------------------------------------------------

    def check_serving(self, epoch: int | None = None) -> None:
        """Raise ``tablet_damaged``, or for a tombstone ``stale_epoch`` (when ``epoch`` is below the one it
        kept) or ``tablet_deleted``, or ``tablet_copying``, if this replica must not serve."""
        if self.status == "damaged":
            raise RpcError("tablet_damaged", self.damage or "damaged")
        if self.status == "deleted":
            if epoch is not None and epoch < self.epoch:
                raise RpcError("stale_epoch", f"tombstone kept epoch {self.epoch}", epoch=self.epoch)
            raise RpcError("tablet_deleted", f"tablet {self.tablet} is a tombstone", epoch=self.epoch,
                           last_entry=self.last_entry)
        if self.status == "copying":
            raise RpcError("tablet_copying", f"tablet {self.tablet} is being copied", epoch=self.epoch)

    async def delete(self, epoch: int) -> dict[str, Any]:
        """Tombstone this replica (Kudu seed): shut it down, mark the superblock DELETED with the last entry
        id, quarantine the data, keep the consensus metadata. Refused for a request older than our epoch."""
        async with self.lock:
            if self.status == "deleted":
                return {"state": DELETED, "epoch": self.epoch}
            if self.status == "copying":
                raise RpcError("tablet_copying", "a copy is running; close its session instead")
            if epoch < self.epoch:
                raise RpcError("stale_epoch", f"delete at epoch {epoch}, replica is at {self.epoch}", epoch=self.epoch)
            last = list(self.head) if self.wal is not None else self.last_entry
            await self._shutdown_data()
            try:
                async with self._state_lock:  # no checkpoint may write state.json under the tombstone's
                    qdir = await asyncio.to_thread(superblock.delete, self.data_dir, self.tablet, self.dir, last,
                                                   self.epoch)
            except Exception as e:
                # The WAL is closed and the delete rolls forward at the next start: serve nothing until then.
                self.mark_damaged(f"delete failed: {type(e).__name__}: {e}")
                raise
            was = self.data_state
            self.epoch = rules.tombstone_keeps_epoch(self.epoch)
            self.status, self.data_state, self.leader_id, self.last_entry = "deleted", DELETED, None, last
            self.log, self.durable, self.commit, self.kv, self.results = [], -1, -1, KvState(), {}
            self.events.emit("tablet_state", tablet=self.tablet, state=DELETED, was=was, why="tombstoned")
            self.events.emit("tombstoned", tablet=self.tablet, epoch=self.epoch, last_entry=last, qdir=qdir)
            return {"state": DELETED, "epoch": self.epoch}

    async def _shutdown_data(self) -> None:
        """Stop the leader role and the flusher, flush unwritten entries and close the WAL."""
        if self.role is not None:
            self.role.stop("deleted")
            self.role = None
        if self._flusher is not None:
            self._flusher.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._flusher
            self._flusher = None
        if self.wal is not None:
            with contextlib.suppress(OSError):
                if self._unwritten:
                    self._write_and_sync(self.wal, self._unwritten)
                self._unwritten = []
            self.wal.close()
            self.wal = None

    async def _adopt_without_data(self, epoch: int) -> None:
        """Write ``epoch`` into the consensus metadata of a replica with no data to serve (a tombstone, a
        copy in progress), durably, and log ``epoch_adopted``. The caller holds ``self.lock``."""
        async with self._state_lock:
            self.epoch = epoch
            cm = statefile.read_json(os.path.join(self.dir, "state.json")) or {}
            await asyncio.to_thread(statefile.write_consensus_meta, os.path.join(self.dir, "state.json"),
                                    {**cm, "epoch": epoch})
        self.events.emit("epoch_adopted", tablet=self.tablet, epoch=epoch, status=self.status)

    async def _fence_tombstone(self, epoch: int) -> dict[str, Any]:
        """A tombstone answers a fence with the epoch it kept: older epochs are stale; a newer one is
        adopted durably (so the leader it came from outlives older ones) but the tombstone has no data,
        so it is refused with ``tablet_deleted`` and never counts toward a fence quorum."""
        if not rules.fence_allowed(self.epoch, "active", epoch):
            raise RpcError("stale_epoch", f"tombstone kept epoch {self.epoch}", epoch=self.epoch)
        await self._adopt_without_data(epoch)
        raise RpcError("tablet_deleted", f"tablet {self.tablet} is a tombstone", epoch=self.epoch,
                       last_entry=self.last_entry)

    async def _refuse_copying(self, epoch: int) -> NoReturn:
        """A replica being filled by a tablet copy refuses fences and leaders' requests
        (``tablet_copying``), but first adopts a newer ``epoch`` durably, exactly as a tombstone does.

        Copyset seed: a node that meets a newer epoch, from a peer or the master, adopts it at once
        and refuses the older primary. Kudu seed: the copy then merges the downloaded consensus metadata
        with this local one, highest epoch winning (:func:`system.rules.merge_consensus_meta`), which is
        why the merge exists. The copy merges, writes and swaps in the READY replica under this same
        lock, so an adoption is either seen by the merge or refused here (``tablet_replaced``, to be
        retried on the replica that took this object's place)."""
        async with self.lock:
            if self.replaced:
                raise RpcError("tablet_replaced", f"tablet {self.tablet}'s copy just ended; retry", epoch=self.epoch)
            if self.status == "copying" and epoch > self.epoch:
                await self._adopt_without_data(epoch)
        raise RpcError("tablet_copying", f"tablet {self.tablet} is being copied", epoch=self.epoch)

    async def fence(self, epoch: int) -> dict[str, Any]:
        """Fence Request: stop replicating, adopt ``epoch`` durably, report the head index."""
        if self.status == "deleted":
            async with self.lock:
                return await self._fence_tombstone(epoch)
        if self.status == "copying":
            await self._refuse_copying(epoch)
        self.check_serving()
        async with self.lock:
            # A delete or a copy may have held the lock while this request waited: check again, or a
            # tombstone (its WAL closed) would become a fenced replica that leaders stream to.
            if self.status == "deleted":
                return await self._fence_tombstone(epoch)
            self.check_serving()
            if not rules.fence_allowed(self.epoch, self.status, epoch):
                raise RpcError("stale_epoch", f"fence for epoch {epoch}, replica is at {self.epoch} ({self.status})",
                               epoch=self.epoch)
            if self.role is not None:
                self.role.stop("fenced")
                self.role = None
            self.epoch, self.status, self.leader_id = epoch, "fenced", None
            await self.persist()
            self.events.emit("fenced", tablet=self.tablet, epoch=epoch, head=list(self.head), commit=self.commit)
            return {"head": list(self.head), "commit": self.commit}

    def _check_leader_request(self, epoch: int, leader: str) -> None:
        if self.status == "fenced" and epoch == self.epoch:
            return
        if self.status == "follower" and (epoch == self.epoch or (epoch > self.epoch and leader == self.leader_id)):
            return
        raise RpcError("stale_epoch" if epoch < self.epoch else "not_follower",
                       f"request from {leader} at epoch {epoch}; replica is {self.status} at {self.epoch}",
                       epoch=self.epoch)

    async def _follow(self, epoch: int, leader: str) -> None:
        if self.status != "follower" or self.epoch != epoch or self.leader_id != leader:
            self.status, self.epoch, self.leader_id = "follower", epoch, leader
            await self.persist()
            self.events.emit("following", tablet=self.tablet, epoch=epoch, leader=leader, head=list(self.head))

    async def truncate(self, epoch: int, leader: str, point: EntryId) -> dict[str, Any]:
        """Truncate Request: keep the entries with ids at or below ``point``; reply with the new head."""
        if self.status == "copying":
            await self._refuse_copying(epoch)
        self.check_serving(epoch)
        async with self.lock:
            self._check_leader_request(epoch, leader)
            keep = rules.kept_prefix([(e["e"], e["o"]) for e in self.log], point)
            if keep - 1 < self.commit:
                self.events.emit("truncate_refused", tablet=self.tablet, point=list(point), commit=self.commit)
                raise RpcError("truncate_below_commit", f"cut to {keep - 1} is below commit {self.commit}")
            await self.wait_durable(len(self.log) - 1)
            if keep < len(self.log):
                assert self.wal is not None
                await asyncio.to_thread(self.wal.truncate_after, keep - 1)
                del self.log[keep:]
                self.durable = min(self.durable, keep - 1)
            await self._follow(epoch, leader)
            self.events.emit("truncated", tablet=self.tablet, epoch=epoch, point=list(point), head=list(self.head))
            return {"head": list(self.head)}

    async def add_entries(self, epoch: int, leader: str, prev: EntryId | None, entries: list[Entry],
                          commit: int) -> dict[str, Any]:
        """Add Entry Request: append a batch that continues the log at ``prev``; ack once fsynced.

        ``prev`` None is a probe: it only makes this replica a follower and reports its head.
        """
        if self.status == "copying":
            await self._refuse_copying(epoch)
        self.check_serving(epoch)
        async with self.lock:
            self._check_leader_request(epoch, leader)
            await self._follow(epoch, leader)
            if prev is None:
                return {"head": list(self.head)}
            if not rules.continues_log(self.head, prev):  # a heartbeat must continue the log too
                raise RpcError("log_mismatch", f"batch continues {list(prev)}, head is {list(self.head)}",
                               head=list(self.head))
            if self.head != prev:
                # Only reachable under bug gap-ack: acknowledge what we do not hold (a heartbeat past the
                # gap is answered with the real head, which the leader's cumulative count ignores).
                return {"head": [entries[-1]["e"], entries[-1]["o"]] if entries else list(self.head)}
            if entries:
                self.append_local(entries)
                await self.wait_durable(len(self.log) - 1)
            self.advance_commit(commit)
            return {"head": list(self.head)}

    def confirm(self, epoch: int) -> dict[str, Any]:
        """Leadership confirmation for reads: ok while no election newer than ``epoch`` fenced us.

        A tombstone answers by the epoch it kept, so a stale leader of an ensemble it left is refused."""
        if self.status != "deleted":
            self.check_serving()
        if self.epoch > epoch:
            raise RpcError("stale_epoch", f"replica is at epoch {self.epoch}", epoch=self.epoch)
        return {"epoch": self.epoch}

    async def install_snapshot(self, epoch: int, entries: list[Entry], commit: int) -> dict[str, Any]:
        """Snapshot Request: replace the log with the leader's, adopt ``epoch`` and stay fenced."""
        async with self.lock:
            if self.status in ("deleted", "copying"):
                self.check_serving(epoch)
            if self.status != "damaged" and self.epoch >= epoch:
                raise RpcError("stale_epoch", f"replica already at epoch {self.epoch}", epoch=self.epoch)
            if self.role is not None:
                self.role.stop("snapshot")
                self.role = None
            if self.wal is None:
                # Repairing a damaged replica is tablet copy's job (a later issue), not a snapshot's.
                raise RpcError("tablet_damaged", "cannot install a snapshot over a damaged tablet")
            await asyncio.to_thread(self.wal.replace, entries)
            with contextlib.suppress(FileNotFoundError):
                os.remove(os.path.join(self.dir, "snapshot.json"))
            self.log = list(entries)
            self.durable = len(self.log) - 1
            self.kv = KvState()
            self.results = {}
            self.commit = -1
            self.epoch, self.status, self.leader_id = epoch, "fenced", None
            self.advance_commit(commit)
            await self.persist()
            self.events.emit("snapshot_installed", tablet=self.tablet, epoch=epoch, head=list(self.head),
                             commit=self.commit)
            return {"head": list(self.head)}

    def summary(self) -> dict[str, Any]:
        """What a heartbeat reports: status, epoch, head, commit, leader and active followers."""
        out = {"status": self.status, "state": self.data_state, "epoch": self.epoch,
               "head": list(self.head) if self.status not in ("damaged", "deleted", "copying") else None,
               "commit": self.commit, "leader": self.leader_id, "session": self.session}
        if self.status == "deleted":
            out["last_entry"] = self.last_entry
        if self.role is not None:
            out["followers"] = self.role.follower_ids()
            out["ensemble"] = list(self.role.ensemble)
            out["pre_voters"] = self.role.pre_voter_progress()
        if self.damage:
            out["damage"] = self.damage
        return out

    def dump(self) -> dict[str, Any]:
        """Everything a checker needs: the summary plus the log and the applied key-value state."""
        return {**self.summary(), "entries": self.log, "kv": self.kv.data, "applied": self.kv.applied}

    async def close(self) -> None:
        """Stop background work, checkpoint the commit index and close the WAL."""
        if self.role is not None:
            self.role.stop("shutdown")
            self.role = None
        if self._flusher is not None:
            self._flusher.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._flusher
        with contextlib.suppress(Exception):
            if self._unwritten and self.wal is not None:
                self._write_and_sync(self.wal, self._unwritten)
                self._unwritten = []
            await self.persist_commit_if_moved()
        if self.wal is not None:
            self.wal.close()
