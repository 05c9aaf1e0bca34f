"""Moving a tablet's acting set (the ensemble) toward its up set (the master's placement).

Copyset seed: the up set is what the master wants, the acting set what serves now, the stray set
the nodes holding full data. When they differ, and the tablet is steady, the operator takes one step:

- an acting member whose replica is lost (a tombstone or damaged) or that is dead and no longer
  wanted is removed first (contract; a leader is first moved away by an election);
- a member the up set adds arrives by a migration, one at a time, recorded in the shard record as
  ``migration: {new, old, stage, session}``:
  1. ``pre_voter``: the leader streams to it as a non-voting catch-up member (Kudu PRE_VOTER);
  2. ``copy``: it is backfilled by tablet copy from the leader (StartTabletCopy);
  3. ``promote``: once caught up, an expand reconfiguration makes it a voter (if its replica was lost
     meanwhile, the migration goes back to ``copy`` under a new session);
  4. ``contract``: the member it replaces (if any) is removed and its replica tombstoned;
- an acting member the up set dropped is then contracted away.

Each stage runs under its own session id (Scylla topology guards): the shard record's ``sessions``
counter numbers them, and before a stage acts on the new node a barrier (``close_sessions``) closes
every earlier session there, so a copy from a closed session can no longer make the tablet READY.
Cancelling (the up set no longer names the new node) drops the catch-up member, closes its sessions
and tombstones its partial replica. Replicas on nodes outside the acting set are tombstoned (stray GC).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from system.failures import report_unplanned
from system.operator.election import elect
from system.operator.reconfig import reconfigure
from system.operator.shards import shard_key
from system.rules import DOES_NOT_EXIST, READY

if TYPE_CHECKING:
    from system.operator.control import Operator

Step = Coroutine[Any, Any, Any]
COPY_RPC_TIMEOUT_S = 60.0  # pragma: no mutate


def report(op: Operator, node: str, tablet: int) -> dict[str, Any] | None:
    """The node's last heartbeat report on ``tablet`` ({} if it has none; None if never heard)."""
    got = op.info.get(node)
    return None if got is None else dict(got[1].get(str(tablet), {}))


def replica_lost(op: Operator, node: str, tablet: int) -> bool:
    """Does a live member report its replica as a tombstone or damaged (it needs a fresh copy)?"""
    rep = report(op, node, tablet)
    return op.alive(node) and rep is not None and rep.get("status") in ("deleted", "damaged")


async def update(op: Operator, tablet: int, change: Callable[[dict[str, Any]], dict[str, Any] | None]) -> bool:
    """Compare-and-set the shard record with ``change`` (None: leave it); False if it moved meanwhile."""
    rec = await op.meta_get(shard_key(tablet))
    if rec is None:
        return False
    new = change(dict(rec[0]))
    if new is None:
        return False
    return await op.meta_cas(shard_key(tablet), new, rec[1]) is not None


async def barrier(op: Operator, node: str, tablet: int, below: int) -> bool:
    """Close every session of ``tablet`` below ``below`` on ``node``; True once it acknowledged."""
    try:
        await op.call(node, "close_sessions", {"tablet": tablet, "below": below}, timeout=3.0)
        return True
    except Exception as e:
        report_unplanned(f"the barrier of tablet {tablet} on {node}", e)
        op.emit("barrier_failed", tablet=tablet, node=node, below=below, error=str(e))
        return False


async def tombstone(op: Operator, node: str, tablet: int, epoch: int) -> bool:
    """Ask ``node`` to tombstone its replica of ``tablet`` (best effort)."""
    try:
        await op.call(node, "delete_tablet", {"tablet": tablet, "epoch": epoch}, timeout=5.0)
        op.emit("replica_tombstoned", tablet=tablet, node=node, epoch=epoch)
        return True
    except Exception as e:
        report_unplanned(f"the tombstone of tablet {tablet} on {node}", e)
        op.emit("tombstone_failed", tablet=tablet, node=node, error=str(e))
        return False


def plan(op: Operator, t: int, meta: dict[str, Any]) -> Step | None:
    """The next step toward the up set for a steady tablet whose leader is alive, or None."""
    ens, leader = list(meta["ensemble"]), meta["leader"]
    up = list(op.placements.get(t, {}).get("up") or ens)
    mig = meta.get("migration")
    if mig:
        if mig["new"] not in up and mig["new"] not in ens:
            return cancel(op, t, meta)
        return step(op, t, meta)
    lost = [m for m in ens if replica_lost(op, m, t)]
    if lost and len(ens) > 1:
        return remove(op, t, meta, lost[0])
    extra = [m for m in ens if m not in up]
    missing = [m for m in up if m not in ens and op.alive(m)]
    dead_extra = [m for m in extra if not op.alive(m)]
    if dead_extra and len(ens) > 1:
        return remove(op, t, meta, dead_extra[0])
    if missing:
        return start(op, t, missing[0], extra[0] if extra else None)
    if extra and len(ens) > 1:
        return remove(op, t, meta, extra[0])
    strays = [m for m in op.live_members() if m not in ens and (report(op, m, t) or {}).get("state") == READY
              and int((report(op, m, t) or {}).get("epoch", -1)) <= meta["epoch"]]
    if strays and leader:
        return tombstone(op, strays[0], t, meta["epoch"])
    return None


async def remove(op: Operator, t: int, meta: dict[str, Any], member: str) -> bool:
    """Contract ``member`` out of the ensemble (moving the leadership off it first) and tombstone it."""
    if member == meta["leader"]:
        op.emit("leader_transfer", tablet=t, away_from=member)
        return await elect(op, t, avoid=(member,))
    done = await reconfigure(op, t, "contract", member, None)
    if op.alive(member):
        await tombstone(op, member, t, done["epoch"])
    return True


async def start(op: Operator, t: int, new: str, old: str | None) -> bool:
    """Record a new migration toward ``new`` (replacing ``old``), stage 1, with a fresh session."""
    wrote: dict[str, Any] = {}

    def change(m: dict[str, Any]) -> dict[str, Any] | None:
        if m.get("migration") or m["status"] != "steady" or m.get("reconfig") or new in m["ensemble"]:
            return None
        s = int(m.get("sessions", 0)) + 1
        wrote.update(session=s)
        return {**m, "sessions": s, "migration": {"new": new, "old": old, "stage": "pre_voter", "session": s}}
    ok = await update(op, t, change)
    if ok:
        op.emit("migration_started", tablet=t, new=new, old=old, session=wrote.get("session"))
    return ok


async def advance(op: Operator, t: int, stage: str, mig: dict[str, Any]) -> bool:
    """Move the migration to ``stage`` under a new session (closing the previous one)."""
    wrote: dict[str, Any] = {}

    def change(m: dict[str, Any]) -> dict[str, Any] | None:
        cur = m.get("migration")
        if not cur or cur["session"] != mig["session"]:
            return None
        s = int(m.get("sessions", 0)) + 1
        wrote.update(session=s)
        return {**m, "sessions": s, "migration": {**cur, "stage": stage, "session": s}}
    ok = await update(op, t, change)
    if ok:
        op.emit("migration_stage", tablet=t, new=mig["new"], stage=stage, previous=mig["stage"],
                session=wrote.get("session"))
    return ok


async def finish(op: Operator, t: int, mig: dict[str, Any], why: str) -> bool:
    """Clear the migration and close its last session in the record."""
    wrote: dict[str, Any] = {}

    def change(m: dict[str, Any]) -> dict[str, Any] | None:
        cur = m.get("migration")
        if not cur or cur["session"] != mig["session"]:
            return None
        wrote.update(sessions=int(m.get("sessions", 0)) + 1)
        return {**m, "sessions": wrote["sessions"], "migration": None}
    ok = await update(op, t, change)
    if ok:
        op.emit("migration_done" if why == "done" else "migration_cancelled", tablet=t, new=mig["new"],
                old=mig.get("old"), stage=mig["stage"], sessions=wrote.get("sessions"))
    return ok


async def _ensure_pre_voter(op: Operator, t: int, meta: dict[str, Any], new: str) -> bool:
    """Make sure the leader streams to ``new`` as a catch-up member; fence ``new`` at the current
    epoch first if its replica is behind it (it then accepts the current leader only)."""
    rep = report(op, new, t) or {}
    if rep.get("state") == READY and rep.get("status") in ("fenced", "follower") and \
            int(rep.get("epoch", -1)) < meta["epoch"]:
        try:
            await op.call(new, "fence", {"tablet": t, "epoch": meta["epoch"], "create": False}, timeout=3.0)
        except Exception as e:
            report_unplanned(f"the fence of tablet {t} on {new}", e)
            op.emit("fence_failed", tablet=t, node=new, epoch=meta["epoch"], error=str(e))
    await op.call(meta["leader"], "add_pre_voter", {"tablet": t, "epoch": meta["epoch"], "node": new,
                                                    "addr": op.addr(new)}, timeout=3.0)
    return True


async def step(op: Operator, t: int, meta: dict[str, Any]) -> bool:
    """Carry the migration in flight one stage further."""
    mig = meta["migration"]
    new, session, leader = mig["new"], int(mig["session"]), meta["leader"]
    if mig["stage"] == "pre_voter":
        if not await barrier(op, new, t, session):
            return False
        await _ensure_pre_voter(op, t, meta, new)
        return await advance(op, t, "copy", mig)
    if mig["stage"] == "copy":
        rep = report(op, new, t)
        if rep is None:
            return False
        if rep.get("state") == READY and rep.get("session") == session:
            return await advance(op, t, "promote", mig)
        if rep.get("status") == "copying":
            return True
        if not await barrier(op, new, t, session):
            return False
        src = op.addr(leader)
        assert src is not None
        await op.call(new, "start_tablet_copy", {
            "tablet": t, "session": session, "epoch": meta["epoch"], "source": {**src, "member": leader},
            "current_state": rep.get("state") or DOES_NOT_EXIST}, timeout=COPY_RPC_TIMEOUT_S)
        op.emit("tablet_copied", tablet=t, node=new, session=session)
        return True
    if mig["stage"] == "promote":
        if new in meta["ensemble"]:
            return await advance(op, t, "contract", mig)
        if replica_lost(op, new, t):
            # Its copy was lost after the copy stage ended (a stale operator's copy of the closed stage
            # tombstoned it and failed, say): a tombstone never catches up, so copy it again.
            return await advance(op, t, "copy", mig)
        lrep = op.fresh(leader, t, 0.0) or {}
        progress = (lrep.get("pre_voters") or {}).get(new)
        if progress is None or progress < 0:
            await _ensure_pre_voter(op, t, meta, new)
            return False
        if progress < int(lrep.get("commit", 0)):
            return True
        await reconfigure(op, t, "expand", None, new, promote=True)
        return True
    old = mig.get("old")
    if old and old in meta["ensemble"] and len(meta["ensemble"]) > 1:
        return await remove(op, t, meta, old)
    return await finish(op, t, mig, "done")


async def cancel(op: Operator, t: int, meta: dict[str, Any]) -> bool:
    """The up set no longer wants the migration's new node: drop it and clean up after it."""
    mig = meta["migration"]
    new = mig["new"]
    if new not in meta["ensemble"]:
        try:
            await op.call(meta["leader"], "remove_pre_voter", {"tablet": t, "node": new}, timeout=3.0)
        except Exception as e:
            report_unplanned(f"remove_pre_voter {new} from tablet {t}", e)
            op.emit("remove_pre_voter_failed", tablet=t, node=new, error=str(e))
    if not await finish(op, t, mig, "cancelled"):
        return False
    if await barrier(op, new, t, int(meta.get("sessions", 0)) + 1) and new not in meta["ensemble"]:
        rep = report(op, new, t) or {}
        if rep.get("state") == READY:  # a copy still running aborts itself: its session is closed
            await tombstone(op, new, t, meta["epoch"])
    return True
