"""The reference system's membership State: replica sets changed through the master's admin API.

The generic membership fault (:mod:`nemesis.membership`) drives it, as Jepsen's membership nemesis
drives a database's State. Changes (each window starts one; its end starts putting things back):
- ``move-replica``: move one replica of a tablet to a node outside its up set; with no such node
  (every node holds the tablet) the replica is removed instead, and re-added when the window ends
  (a copy over its tombstone);
- ``expand``: add a replica on a node outside the up set (skipped when there is none);
- ``contract``: remove a replica (in the damage guard's turn, :mod:`.faults.guard`, as a wipe is);
- ``swap``: swap a follower of a tablet for a live node outside its ensemble, through the operator's
  reconfiguration API (Oxia's swap: the new node gets a snapshot of the log at the new epoch), as an admin
  would by hand; the master's placement then moves the tablet back to its up set;
- ``retire-and-readd``: decommission a node's live member (the master drains it, then it is ``left``),
  and when the window ends, once it has left, wipe it and start it again, so it joins as a new node and
  is re-populated (one not yet drained waits for a later window's end, or the heal, which wipes it only
  in the damage guard's turn).

Every window's end (``restore``), and the heal step (``settle``), restore the configured replica count on
every tablet; ``settle`` also waits (bounded) until no migration is in flight and each acting set equals
its up set.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Sequence
from typing import Any

from fencepost import ClusterView
from fencepost_reference.faults.guard import guard_of
from fencepost_reference.info import cluster_info, operator_call
from system.admin import call
from system.wire import RpcError

TARGETS = ("move-replica", "expand", "contract", "retire-and-readd", "swap")
SETTLE_S = 60.0
RETIRE_WAIT_S = 20.0


class ReferenceMembership:
    """Admin-driven replica moves, expansions, contractions and node retirements (a Membership State)."""

    def __init__(self) -> None:
        self._retired: list[tuple[str, str]] = []
        """(process, member) of each node retired and not yet wiped and started again."""

    def changes(self) -> Sequence[str]:
        """The membership changes a window may make."""
        return TARGETS

    @staticmethod
    def _master(cluster: ClusterView) -> tuple[str, int, str]:
        info = cluster_info(cluster).get("master")
        if not info:
            raise RuntimeError("the cluster runs no master: membership faults need one")
        host, port = info["addr"]
        return host, int(port), str(info["token"])

    async def _status(self, cluster: ClusterView) -> dict[str, Any]:
        host, port, _ = self._master(cluster)
        return dict(await call(host, port, "status", {}, timeout=5.0))

    async def _admin(self, cluster: ClusterView, method: str, params: dict[str, Any]) -> Any:
        """One admin call naming the committed config id; a stale id (the policy moved) is retried."""
        host, port, token = self._master(cluster)
        for _ in range(5):
            p = dict(params)
            if "tablet" in p:
                st = await self._status(cluster)
                p["config_id"] = st["tablets"][str(p["tablet"])]["config_id"]
            try:
                return await call(host, port, method, {**p, "token": token}, timeout=10.0)
            except RpcError as e:
                if e.code not in ("stale_config", "busy"):
                    raise
                await asyncio.sleep(0.2)
        raise RuntimeError(f"{method}: the config kept changing")

    async def change(self, cluster: ClusterView, kind: str, rng: random.Random) -> dict[str, Any]:
        """Make the change ``kind`` names."""
        st = await self._status(cluster)
        tablets = sorted(st["tablets"], key=int)
        t = rng.choice(tablets)
        tab = st["tablets"][t]
        members = st["members"]
        live = sorted(m for m, r in members.items() if r["state"] in ("normal", "bootstrapping") and r["alive"])
        spare = [m for m in live if m not in tab["up"]]
        out: dict[str, Any] = {"target": kind, "tablet": int(t)}
        if kind == "retire-and-readd":
            node = rng.choice(sorted(cluster.nodes()))
            # The node's live member: after a wipe, process n4 is member n4~2, and "n4" names the old, left
            # identity, which the master would report already retired while n4~2 kept its replicas.
            member = next((m for m, r in sorted(members.items()) if r["name"] == node and r["state"] != "left"), None)
            if member is None:
                return {**out, "skipped": f"{node} has no member that has not left"}
            res = await self._admin(cluster, "retire_node", {"node": member})
            self._retired.append((node, str(res["member"])))
            return {**out, "retired": node, "member": res["member"]}
        if kind == "swap":
            return {**out, **await swap_follower(cluster, int(t), rng)}
        if kind == "expand":
            if not spare:
                return {**out, "skipped": "every live node already holds the tablet"}
            res = await self._admin(cluster, "add_replica", {"tablet": int(t), "node": rng.choice(spare)})
            return {**out, "up": res["up"]}
        victim = rng.choice(sorted(tab["up"]))
        if kind == "move-replica" and spare:
            dst = rng.choice(spare)
            res = await self._admin(cluster, "move_replica", {"tablet": int(t), "from": victim, "to": dst})
        elif len(tab["up"]) > 1:
            # Taking a replica away is taking its data away, as a wipe does: in the damage guard's turn.
            guard = guard_of(cluster)
            async with guard.turn(cluster) as why:
                if why is not None:
                    return {**out, "skipped": why}
                guard.damaged([victim])
                res = await self._admin(cluster, "remove_replica", {"tablet": int(t), "node": victim})
        else:
            return {**out, "skipped": "the tablet has one replica"}
        return {**out, "up": res["up"], "removed": victim}

    async def restore(self, cluster: ClusterView) -> dict[str, Any]:
        """Put things back: re-add retired nodes as new ones, restore replica counts (not waiting)."""
        readded = await self._readd(cluster)
        restored = await self._restore(cluster)
        return {"readded": readded, "restored": restored}

    async def _readd(self, cluster: ClusterView, wait_s: float = RETIRE_WAIT_S, force: bool = False) -> list[str]:
        """Wipe and restart each retired node once the master has drained it (its member ``left``), waiting up
        to ``wait_s``; one still holding replicas after that stays retired for the next call, unless
        ``force`` (the heal: the cluster should get its node back), which wipes it in the damage guard's turn
        if it gets one."""
        done, waiting = [], []
        deadline = time.monotonic() + wait_s
        while self._retired:
            node, member = self._retired.pop()
            while True:
                st = await self._status(cluster)
                drained = (st["members"].get(member) or {}).get("state") == "left"
                if drained or time.monotonic() >= deadline:
                    break
                await asyncio.sleep(0.5)
            if drained:
                await cluster.wipe(node)  # a retired node comes back only as a new node
                done.append(node)
            elif not force:
                waiting.append((node, member))  # wiping it now would take its replicas' data
            else:  # the heal: wiping an undrained node takes a replica's data, so only in the damage guard's turn
                guard = guard_of(cluster)
                async with guard.turn(cluster, max(0.0, deadline - time.monotonic()) + SETTLE_S) as why:
                    if why is None:
                        guard.damaged([node])
                        await cluster.wipe(node)
                        done.append(node)
                    else:
                        waiting.append((node, member))
        self._retired = waiting
        return done

    async def _restore(self, cluster: ClusterView) -> dict[str, int]:
        rf = int(cluster_info(cluster).get("replication") or 3)
        st = await self._status(cluster)
        changed = {}
        for t, tab in st["tablets"].items():
            if tab["rf"] is not None and int(tab["rf"]) != rf:
                await self._admin(cluster, "change_replica_count", {"tablet": int(t), "count": rf})
                changed[t] = rf
        return changed

    async def settle(self, cluster: ClusterView) -> None:
        """Re-add, restore every tablet's replica count, and wait until the acting sets match."""
        await self._readd(cluster, SETTLE_S, force=True)
        rf = int(cluster_info(cluster).get("replication") or 3)
        deadline = time.monotonic() + SETTLE_S
        while time.monotonic() < deadline:
            try:
                await self._restore(cluster)
                st = await self._status(cluster)
            except Exception:
                await asyncio.sleep(1.0)
                continue
            tabs = st["tablets"].values()
            if all(t["migration"] is None and t["up"] and sorted(t["up"]) == sorted(t["acting"])
                   and len(t["up"]) == rf for t in tabs):
                return
            await asyncio.sleep(0.5)


async def swap_follower(cluster: ClusterView, t: int, rng: random.Random) -> dict[str, Any]:
    """Ask the operator to swap a follower of tablet ``t`` for a live node outside its ensemble, as an admin
    would; what it answered (``refused``, with the code, when it refused). No damage guard: the new node gets
    the whole log before it joins, as in the migrations the system runs itself."""
    status = await operator_call(cluster, "status", {})
    meta = status["tablets"].get(str(t))
    if meta is None or meta.get("status") != "steady" or meta.get("reconfig") or not meta.get("leader"):
        return {"skipped": "the tablet has no steady leader"}
    followers = sorted(m for m in meta["ensemble"] if m != meta["leader"])
    spare = sorted(m for m, up in status["alive"].items() if up and m not in meta["ensemble"])
    if not followers or not spare:
        return {"skipped": "no follower to swap out or no live node outside the ensemble"}
    old, new = rng.choice(followers), rng.choice(spare)
    try:
        done = await operator_call(cluster, "reconfig", {"tablet": t, "op": "swap", "old": old, "new": new})
    except RpcError as e:  # e.g. busy, or the new node holds a tombstone of the tablet from a move
        return {"old": old, "new": new, "refused": f"{e.code}: {e.message}"}
    return {"old": old, "new": new, "ensemble": done.get("ensemble"), "epoch": done.get("epoch")}
