"""Reconfiguration by two-phase commit: node swap, expand and contract.

PREPARE: record the op, its nodes and an incremented epoch in the metadata; ask the leader to
prepare (it adopts the epoch and, for swap/contract, deactivates the old node's cursor); for swap and
expand, install the leader's snapshot on the new node.
COMMIT: record phase ``commit``; ask the leader to commit (a contract is retried until
:func:`system.rules.safe_to_contract` lets it); record the new ensemble and clear the op.

If any step fails, an election resolves the reconfiguration: it fences the new node too and
completes a COMMIT-phase change or abandons a PREPARE-phase one (see :mod:`system.rules`).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from system import rules
from system.operator.election import elect
from system.operator.shards import shard_key
from system.wire import RpcError

if TYPE_CHECKING:
    from system.operator.control import Operator

COMMIT_RETRY_S = 15.0  # pragma: no mutate


class ReconfigRefused(Exception):
    """The reconfiguration is not allowed now (a definite refusal; nothing changed)."""


def check_allowed(meta: dict[str, Any], op: str, old: str | None, new: str | None, known: list[str],
                  promote: bool = False) -> None:
    """Raise ReconfigRefused unless ``op`` may start: an elected leader, no election or reconfiguration
    in progress, and nodes that make sense (a swap or contract never removes the leader). A node catching
    up as the tablet's migration's new member joins only by that migration's promote: a swap or expand
    would install a snapshot on it while the leader still streams to it as a catch-up member, and the
    stream's next truncation, computed from the head it knew, would cut committed entries (as a membership
    swap onto a migration's new node once did in the clean default campaign). Nor may a swap or contract
    take that node out before the migration ends: the migration would log done without it (as an admin swap
    of the new node right after its promote once did)."""
    if meta["status"] != "steady" or meta.get("reconfig") or not meta.get("leader"):
        raise ReconfigRefused(f"tablet is {meta['status']} (reconfig {meta.get('reconfig')}): not steady")
    ens = meta["ensemble"]
    if op not in ("swap", "expand", "contract"):
        raise ReconfigRefused(f"unknown reconfiguration {op!r}")
    if op in ("swap", "contract") and (old not in ens or old == meta["leader"]):
        raise ReconfigRefused(f"{op}: old node {old!r} must be a follower in the ensemble {ens}")
    if op in ("swap", "expand") and (new in ens or new not in known):
        raise ReconfigRefused(f"{op}: new node {new!r} must be a known node outside the ensemble {ens}")
    if op == "contract" and len(ens) < 2:
        raise ReconfigRefused("contract: the ensemble cannot shrink below one node")
    catching_up = (meta.get("migration") or {}).get("new")
    if op in ("swap", "expand") and new == catching_up and not promote:
        raise ReconfigRefused(f"{op}: new node {new!r} is catching up in the tablet's migration; it joins by promote")
    if op in ("swap", "contract") and old == catching_up:
        raise ReconfigRefused(f"{op}: old node {old!r} is joining in the tablet's migration; it stays until that ends")


async def reconfigure(op: Operator, tablet: int, kind: str, old: str | None, new: str | None,
                      promote: bool = False) -> dict[str, Any]:
    """Run one reconfiguration; return the new shard record. Raises ReconfigRefused or the failure
    (after resolving it with an election). ``promote``: an expand whose new node is a caught-up
    catch-up member (a migration's step 3), so no snapshot is installed."""
    key = shard_key(tablet)
    rec = await op.meta_get(key)
    if rec is None:
        raise ReconfigRefused(f"no tablet {tablet}")
    meta, version = rec
    check_allowed(meta, kind, old, new, op.node_ids(), promote)
    leader = meta["leader"]
    prepared = {**meta, "epoch": meta["epoch"] + 1,
                "reconfig": {"op": kind, "old": old, "new": new, "phase": "prepare"}}
    v = await op.meta_cas(key, prepared, version)
    if v is None:
        raise ReconfigRefused("metadata changed concurrently (another operator?)")
    epoch = prepared["epoch"]
    op.emit("reconfig_started", tablet=tablet, epoch=epoch, op=kind, old=old, new=new)
    try:
        op.crash_point("reconfig:after-prepare-meta")
        snap = await op.call(leader, "prepare_reconfig", {"tablet": tablet, "epoch": epoch, "op": kind, "old": old,
                                                          "promote": promote}, timeout=10)  # pragma: no mutate
        new_head = None
        if kind in ("swap", "expand") and not promote:
            assert new is not None
            installed = await op.call(new, "install_snapshot", {"tablet": tablet, "epoch": epoch,
                                                                "entries": snap["entries"], "commit": snap["commit"]},
                                      timeout=60)  # pragma: no mutate
            new_head = installed["head"]
        op.crash_point("reconfig:after-prepare")
        committing = {**prepared, "reconfig": {**prepared["reconfig"], "phase": "commit"}}
        v = await op.meta_cas(key, committing, v)
        if v is None:
            raise ReconfigRefused("metadata changed during the reconfiguration")
        op.crash_point("reconfig:after-commit-meta")
        params = {"tablet": tablet, "epoch": epoch, "op": kind, "old": old, "new": new, "new_head": new_head,
                  "addr": op.addr(new) if new else None}
        deadline = asyncio.get_running_loop().time() + COMMIT_RETRY_S
        while True:
            try:
                await op.call(leader, "commit_reconfig", params, timeout=10)  # pragma: no mutate
                break
            except RpcError as e:
                if e.code != "contract_not_safe" or asyncio.get_running_loop().time() > deadline:
                    raise
                await asyncio.sleep(0.2)  # pragma: no mutate
        op.crash_point("reconfig:after-commit")
        done = {**committing, "ensemble": rules.final_ensemble(committing), "reconfig": None,
                "config": int(committing.get("config", 0)) + 1}
        if await op.meta_cas(key, done, v) is None:
            raise ReconfigRefused("metadata changed at the end of the reconfiguration")
        op.emit("reconfig_done", tablet=tablet, epoch=epoch, op=kind, ensemble=done["ensemble"])
        return done
    except Exception as e:
        op.emit("reconfig_failed", tablet=tablet, epoch=epoch, op=kind, error=f"{type(e).__name__}: {e}")
        await elect(op, tablet)
        raise
