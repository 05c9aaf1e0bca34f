"""Tablet copy (Kudu seed), both ends, and the per-tablet migration session guards (Scylla seed).

Destination (``StartTabletCopy``, :func:`start_tablet_copy`): make the seed's checks
(:func:`system.rules.copy_start_error`, then the session guard), tombstone a READY replica first,
then 0. rewrite the superblock as COPYING (keeping the last entry id) and answer; in the background,
1. download the source's
consensus metadata and merge it with ours as it is then (:func:`system.rules.merge_consensus_meta`; the
copying replica may have adopted a newer epoch since the start); 2. download
its WAL and a snapshot (the applied state at its commit index) and write them; 3. write a READY
superblock and fsync it; 4. start the tablet. Any failure goes back to DELETED, as a restart would.

Source (:func:`source_snapshot`): a READY replica hands out its consensus metadata, durable log and
commit index.

Session guards (:class:`SessionGuards`): the coordinator numbers each migration stage's session;
a barrier (``close_sessions``) tells a node every session of a tablet below N is closed. A copy checks
its session when it starts and again before it writes anything that makes the tablet READY.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from typing import TYPE_CHECKING, Any

from system import rules, statefile, superblock
from system.kv import KvState
from system.replica import TabletReplica
from system.rules import COPYING, DOES_NOT_EXIST, READY
from system.wal import Wal
from system.wire import RpcError

if TYPE_CHECKING:
    from system.node import Node

COPY_TIMEOUT_S = 30.0


class SessionGuards:
    """Per tablet, the lowest migration session still open here, kept in ``DIR/sessions.json``."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.closed_below: dict[str, int] = dict(statefile.read_json(path) or {})
        self._locks: dict[int, asyncio.Lock] = {}
        # Barriers of different tablets run in threads at once and share the file (and its temp file):
        # one writer at a time, or a rename fails or installs another barrier's half-written file.
        self._file_lock = threading.Lock()

    def lock(self, tablet: int) -> asyncio.Lock:
        """Held by a copy's start until it is COPYING, by a copy from its last session check until it is
        READY, and by a barrier: so a barrier waits for a copy already applying under an older session, no
        copy applies after it, and a second start of a copy sees the first one's COPYING state."""
        return self._locks.setdefault(tablet, asyncio.Lock())

    def is_open(self, tablet: int, session: int) -> bool:
        """May an operation of ``session`` still have effects on ``tablet``?"""
        return rules.session_open(self.closed_below.get(str(tablet), 0), session)

    def close_below(self, tablet: int, below: int) -> int:
        """Barrier: close every session of ``tablet`` below ``below`` (durably); return the new bound."""
        with self._file_lock:
            cur = self.closed_below.get(str(tablet), 0)
            if below > cur:
                self.closed_below[str(tablet)] = below
                statefile.write_atomic(self.path, self.closed_below)
            return self.closed_below.get(str(tablet), 0)


def source_snapshot(r: TabletReplica) -> dict[str, Any]:
    """What a copy downloads from a READY replica: consensus metadata, the durable log, the commit index."""
    r.check_serving()
    members = list(r.role.ensemble) if r.role is not None else []
    return {"consensus": {"epoch": r.epoch, "members": members, "leader": r.leader_id},
            "entries": r.log[: r.durable + 1], "commit": min(r.commit, r.durable)}


def _local_state(r: TabletReplica | None) -> tuple[str, int, Any]:
    """(data state, epoch, last entry id) of the local replica, DOES_NOT_EXIST if there is none."""
    if r is None:
        return DOES_NOT_EXIST, -1, None
    if r.status == "copying":
        return COPYING, r.epoch, r.last_entry
    if r.status == "deleted":
        return r.data_state, r.epoch, r.last_entry
    return READY, r.epoch, list(r.head)


def _write_data(tablet_dir: str, entries: list[dict[str, Any]], commit: int, merged: dict[str, Any]) -> None:
    """Steps 1-2 on disk: the WAL, the snapshot of the applied state, the merged consensus metadata."""
    wal_path = os.path.join(tablet_dir, "wal")
    with contextlib.suppress(FileNotFoundError):
        os.remove(wal_path)
    wal, _ = Wal.open(wal_path)
    try:
        wal.replace(entries)
    finally:
        wal.close()
    kv = KvState()
    for e in entries[: commit + 1]:
        kv.apply(e["o"], e["v"])
    statefile.write_atomic(os.path.join(tablet_dir, "snapshot.json"), {"applied": kv.applied, "kv": kv.data})
    head = [entries[-1]["e"], entries[-1]["o"]] if entries else list(rules.NO_ENTRY)
    statefile.write_consensus_meta(os.path.join(tablet_dir, "state.json"),
                           {**merged, "head": head, "commit": commit})


async def start_tablet_copy(node: Node, params: dict[str, Any]) -> dict[str, Any]:
    """StartTabletCopy: copy tablet ``params['tablet']`` from ``params['source']`` under ``session``."""
    t = int(params["tablet"])
    session = int(params["session"])
    source = dict(params["source"])
    # One start at a time per tablet, from the state check to COPYING: two operators (or one retrying) may
    # send the same copy at once, and each must see the other's COPYING state, not an empty folder.
    async with node.guards.lock(t):
        r = node.tablets.get(t)
        state, local_epoch, local_last = _local_state(r)
        if not node.guards.is_open(t, session):
            raise RpcError("stale_session", f"session {session} of tablet {t} is closed", state=state)
        err = rules.copy_start_error(state, params["current_state"], int(params["epoch"]), local_epoch,
                                     params.get("last_entry"), local_last)
        if err is not None:
            raise RpcError(err, f"start copy of tablet {t}: we are {state} at epoch {local_epoch}", state=state,
                           epoch=local_epoch, session=r.session if r is not None else None)
        tablet_dir = node.tablet_dir(t)
        if r is not None and state == READY:
            await r.delete(int(params["epoch"]))
            local_last = r.last_entry
        if r is None:
            r = TabletReplica(t, tablet_dir, node.member, node.events)
            r.status = "deleted"
        if state == DOES_NOT_EXIST or statefile.read_json(os.path.join(tablet_dir, "state.json")) is None:
            # a new tablet: empty consensus metadata, so a crash mid-copy leaves a valid tombstone
            os.makedirs(tablet_dir, exist_ok=True)
            await asyncio.to_thread(statefile.write_consensus_meta, os.path.join(tablet_dir, "state.json"),
                                    {"epoch": -1, "status": "deleted", "leader": None, "head": None, "commit": -1})
        await asyncio.to_thread(superblock.write, tablet_dir, COPYING, local_last, None, session)
        was, r.status, r.data_state, r.session = state, "copying", COPYING, session
        node.tablets[t] = r
        node.events.emit("tablet_state", tablet=t, state=COPYING, was=was, why="copy", session=session)
        node.events.emit("copy_started", tablet=t, session=session, source=source.get("member"), epoch=local_epoch)
        node.spawn(_run_copy(node, r, session, source))
        return r.summary()


async def _run_copy(node: Node, r: TabletReplica, session: int, source: dict[str, Any]) -> None:
    """Steps 1-4 in the background (a copy may take long; the caller polls the tablet's state).

    The merge reads the local consensus metadata as it is at merge time, not as it was when the copy
    started: the copying replica ``r`` adopts newer epochs meanwhile (:meth:`TabletReplica._refuse_copying`).
    Merge, writes, READY superblock and the swap of ``node.tablets[t]`` all happen under ``r.lock``, the
    lock those adoptions take, so none is lost between the read and the swap."""
    t = r.tablet
    tablet_dir = node.tablet_dir(t)
    try:
        data = await node.pool.call(source["host"], int(source["port"]), "copy_source", source["uuid"],
                                    {"tablet": t, "session": session}, timeout=COPY_TIMEOUT_S)
        node.crash_point("copy:after-download")
        if node.copy_delay:
            await asyncio.sleep(node.copy_delay)
        async with node.guards.lock(t), r.lock:
            if not node.guards.is_open(t, session):
                raise RpcError("stale_session", f"session {session} of tablet {t} closed during the copy")
            local_cm = await asyncio.to_thread(statefile.read_json, os.path.join(tablet_dir, "state.json"))
            merged = rules.merge_consensus_meta(local_cm, data["consensus"])
            await asyncio.to_thread(_write_data, tablet_dir, list(data["entries"]), int(data["commit"]), merged)
            node.crash_point("copy:after-wal")
            await asyncio.to_thread(superblock.write, tablet_dir, READY, None, None, session)
            _copied(node, r, session, merged, data, int((local_cm or {}).get("epoch", -1)))
    except BaseException as e:
        async with r.lock:  # no adoption may write into the replica loaded here through the old object
            await asyncio.to_thread(superblock.startup, node.dir, t, tablet_dir)
            node.tablets[t] = TabletReplica.load(t, tablet_dir, node.member, node.events)
            r.replaced = True
        node.events.emit("tablet_state", tablet=t, state=node.tablets[t].data_state, was=COPYING, why="copy failed")
        node.events.emit("copy_failed", tablet=t, session=session, error=f"{type(e).__name__}: {e}")
        if isinstance(e, asyncio.CancelledError):
            raise
        return


def _copied(node: Node, r: TabletReplica, session: int, merged: dict[str, Any], data: dict[str, Any],
            local_epoch: int) -> None:
    """Swap the copied replica in for the copying one ``r`` and log that it is READY (under the tablet's
    session lock and ``r.lock``); ``local_epoch`` is the local epoch the merge saw."""
    t = r.tablet
    node.tablets[t] = TabletReplica.load(t, node.tablet_dir(t), node.member, node.events)
    r.replaced = True
    node.events.emit("tablet_state", tablet=t, state=READY, was=COPYING, why="copied", session=session)
    node.events.emit("copy_done", tablet=t, session=session, epoch=merged["epoch"],
                     remote_epoch=data["consensus"]["epoch"], local_epoch=local_epoch,
                     head=list(node.tablets[t].head), commit=node.tablets[t].commit)
