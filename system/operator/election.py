"""Leader election by fencing, step by step as the replication seed describes.

1. bump the epoch in the metadata (status ``election``), by compare-and-set on its version;
2. fence every node of the fencing ensemble;
3. once the responses satisfy :func:`system.rules.fence_quorum_reached`, choose the node with the
   highest head index within the final ensemble (:func:`system.rules.choose_leader`);
4. send Become Leader with the follower map (the final-ensemble heads received so far);
5. the leader truncates its followers as needed (node side);
6. record ``steady`` with the leader and final ensemble, then send Add Follower for each late
   fence response from the final ensemble.

A lost compare-and-set means another operator moved first: this one stops without side effects
beyond fencing, which only ever costs availability.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from system import rules
from system.failures import report_unplanned
from system.operator.shards import shard_key
from system.rules import EntryId

if TYPE_CHECKING:
    from system.operator.control import Operator

FENCE_TIMEOUT_S = 3.0  # pragma: no mutate
LATE_WAIT_S = 2.0  # pragma: no mutate


async def _fence(op: Operator, node: str, tablet: int, epoch: int, create: bool) -> tuple[str, EntryId | None]:
    try:
        reply = await op.call(node, "fence", {"tablet": tablet, "epoch": epoch, "create": create},
                              timeout=FENCE_TIMEOUT_S)
        return node, rules.eid(reply["head"])
    except Exception as e:
        report_unplanned(f"the fence of tablet {tablet} on {node}", e)
        op.emit("fence_failed", tablet=tablet, node=node, epoch=epoch, error=str(e))
        return node, None


def pre_voters_of(op: Operator, meta: dict[str, Any], final: list[str]) -> dict[str, dict[str, Any]]:
    """The catch-up member of a migration in flight, for the new leader to keep streaming to."""
    mig = meta.get("migration")
    if not mig or mig["new"] in final or mig["stage"] not in ("pre_voter", "copy", "promote"):
        return {}
    addr = op.addr(mig["new"])
    return {mig["new"]: addr} if addr is not None else {}


async def elect(op: Operator, tablet: int, avoid: tuple[str, ...] = ()) -> bool:
    """Run one election for ``tablet``; True if it completed with a leader in steady state. ``avoid``:
    nodes not to choose when another has an equal head (moving the leader off a node)."""
    key = shard_key(tablet)
    rec = await op.meta_get(key)
    if rec is None:
        return False
    meta, version = rec
    new: dict[str, Any] = {**meta, "epoch": meta["epoch"] + 1, "status": "election", "leader": None}
    v = await op.meta_cas(key, new, version)
    if v is None:
        op.emit("election_lost_race", tablet=tablet, epoch=new["epoch"])
        return False
    fencing, final = rules.fencing_ensemble(new), rules.final_ensemble(new)
    epoch = new["epoch"]
    op.emit("election_started", tablet=tablet, epoch=epoch, fencing=fencing, final=final,
            reconfig=new.get("reconfig"))
    op.crash_point("election:after-epoch")
    # Replicas are created by the elections of a tablet that never had a leader (nothing acknowledged).
    create = not meta.get("created", True)
    pending = {asyncio.create_task(_fence(op, n, tablet, epoch, create)) for n in fencing if op.addr(n)}
    heads: dict[str, EntryId] = {}
    try:
        deadline = asyncio.get_running_loop().time() + FENCE_TIMEOUT_S + 1
        while not rules.fence_quorum_reached(heads, new):
            left = deadline - asyncio.get_running_loop().time()
            if not pending or left <= 0:
                op.emit("election_failed", tablet=tablet, epoch=epoch, reason="no fence quorum",
                        responded=sorted(heads))
                return False
            done, pending = await asyncio.wait(pending, timeout=left, return_when=asyncio.FIRST_COMPLETED)
            for d in done:
                node, head = d.result()
                if head is not None:
                    heads[node] = head
        op.emit("fence_quorum", tablet=tablet, epoch=epoch, heads={n: list(h) for n, h in heads.items()})
        op.crash_point("election:after-fence")
        leader = rules.choose_leader(heads, final, avoid)
        if leader is None:
            op.emit("election_failed", tablet=tablet, epoch=epoch, reason="no candidate in final ensemble")
            return False
        fmap = {n: list(h) for n, h in heads.items() if n in final and n != leader}
        try:
            await op.call(leader, "become_leader", {"tablet": tablet, "epoch": epoch, "follower_map": fmap,
                                                    "ensemble": final, "nodes": op.addrs(final),
                                                    "pre_voters": pre_voters_of(op, new, final)})
        except Exception as e:
            report_unplanned(f"become_leader for tablet {tablet}", e)
            op.emit("election_failed", tablet=tablet, epoch=epoch, reason=f"become_leader: {e}")
            return False
        op.crash_point("election:after-become-leader")
        done_meta = {**new, "status": "steady", "leader": leader, "ensemble": final, "reconfig": None,
                     "created": True}
        if await op.meta_cas(key, done_meta, v) is None:
            op.emit("election_lost_race", tablet=tablet, epoch=epoch)
            return False
        op.emit("election_done", tablet=tablet, epoch=epoch, leader=leader, ensemble=final,
                followers=sorted(fmap))
        if pending:
            done, pending = await asyncio.wait(pending, timeout=LATE_WAIT_S)
            for d in done:
                node, head = d.result()
                if head is not None and node in final and node != leader and node not in fmap:
                    await add_follower(op, tablet, epoch, leader, node, head)
        return True
    finally:
        for p in pending:
            p.cancel()


async def add_follower(op: Operator, tablet: int, epoch: int, leader: str, node: str, head: EntryId) -> bool:
    """Send Add Follower for a late fence response (or a recovered node) to the leader."""
    try:
        await op.call(leader, "add_follower", {"tablet": tablet, "epoch": epoch, "node": node, "head": list(head),
                                               "addr": op.addr(node)})
    except Exception as e:
        report_unplanned(f"add_follower {node} to tablet {tablet}", e)
        op.emit("add_follower_failed", tablet=tablet, epoch=epoch, node=node, error=str(e))
        return False
    op.emit("follower_added", tablet=tablet, epoch=epoch, leader=leader, node=node, head=list(head))
    return True


async def late_join(op: Operator, tablet: int, meta: dict[str, Any], node: str) -> bool:
    """Bring an ensemble member the leader does not follow back in: fence it at the current epoch
    (so no older leader can use it) and send its head to the leader in an Add Follower Request.

    A member that has no replica (it was down when the tablet was first elected) gets an empty one:
    outside an election an empty follower only catches up, it never decides anything. (Telling a
    lost replica from a never-created one is the tombstone work of a later issue.)"""
    _, head = await _fence(op, node, tablet, meta["epoch"], True)
    if head is None:
        return False
    return await add_follower(op, tablet, meta["epoch"], meta["leader"], node, head)
