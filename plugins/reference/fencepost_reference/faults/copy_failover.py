"""Copy-failover fault: a tablet's leader dies while a copy from it sits between its download and its
merge, so the copying replica meets the next leader's epoch before it merges (Kudu seed, consensus
metadata merge).

A copy downloads the source's consensus metadata at epoch E. If the tablet elects a new leader at E+1
before the copy merges, the copying replica adopts E+1 (from the new leader, which streams to the
migration's catch-up member) and the merge must keep it: the highest epoch wins. Plain faults never
order things so, because a copy takes milliseconds. This fault does:

1. pick a settled tablet T (no migration, acting set = up set, every member alive) with leader L, and a
   live node D outside its up set (run with ``--nodes 4`` or more), waiting at most :data:`SETTLE_WAIT_S`
   for one, and looking again while the spare it chose does not answer (the master's view lags a kill);
   slow D's copies between download and merge (the node's ``set_copy_delay`` test hook,
   :data:`COPY_DELAY_S`; D saves it, so another window's kill or power loss of D keeps it), and re-assert
   that delay on every poll of steps 2-4 (a wipe of D erases it), so that a copy the operator starts again
   is slowed too;
2. move a follower F's replica of T to D through the master (``move_replica``, as the membership
   fault's move-replica does); the operator adds D as a catch-up member, then sends StartTabletCopy
   from L;
3. once D reports T as copying, give the download :data:`DOWNLOAD_S`, then SIGKILL T's leader as the
   master names it now (L, unless T changed leaders meanwhile);
4. the operator elects a new leader at a higher epoch, which streams to D: D refuses (it is copying)
   but adopts the epoch; wait (bounded) until D reports it, then until the copy has ended;
5. start L again and put D's copy delay back to 0.

A correct copy ends READY at the adopted epoch. One that takes the downloaded epoch instead (bug
``copy-overwrites-epoch``) lowers D's epoch, which the amnesia checker's rule 2 reads from D's event log
(``epoch_adopted`` at E+1, then ``tablet_loaded``/``copy_done`` at E). Each window records what it
did, or what it skipped and why. The window's end, and ``heal``, start L if it is still down and put
every node's copy delay back to 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import Sequence
from typing import Any

from fencepost import PROCESSES, ClusterView, FaultSpec, poll_until
from fencepost_reference.info import node_call, replica_summary
from fencepost_reference.master import admin, master_status
from system.wire import ConnectionLost, RpcError, Unreachable

TARGETS = ("leader-during-copy",)
COPY_DELAY_S = 6.0
DOWNLOAD_S = 0.5
STAGE_WAIT_S = 15.0
COPY_END_WAIT_S = COPY_DELAY_S + 10.0
SETTLE_S = 30.0
SETTLE_WAIT_S = 10.0
"""How long a window waits for a settled tablet with a spare live node before it skips. Without it, in the
default campaign many of this fault's windows found none at their start and skipped at once, as
``catch-up-partition``'s did before it waited too."""
POLL_S = 0.2
TRANSPORT_ERRORS = (TimeoutError, OSError, ConnectionLost, Unreachable, RpcError)


class CopyFailoverNemesis:
    """Slow a migration's tablet copy between download and merge, and kill the tablet's leader meanwhile."""

    name = "copy-failover"
    color = "#e76f51"
    needs = frozenset({PROCESSES})

    def __init__(self) -> None:
        self._killed: list[str] = []
        self._delayed: list[str] = []

    def targets(self) -> Sequence[str]:
        """leader-during-copy: the only shape."""
        return TARGETS

    async def _set_delay(self, cluster: ClusterView, node: str, seconds: float) -> None:
        await node_call(cluster, node, "set_copy_delay", {"seconds": seconds})
        if seconds:
            self._delayed.append(node)

    async def _hold_delay(self, cluster: ClusterView, node: str, out: dict[str, Any]) -> None:
        """Set ``node``'s copy delay again (a no-op unless it restarted since), counting in ``out`` the
        times it had been lost."""
        with contextlib.suppress(*TRANSPORT_ERRORS):
            res = await node_call(cluster, node, "set_copy_delay", {"seconds": COPY_DELAY_S})
            if res.get("changed"):
                out["delay_reasserted"] += 1

    async def start(self, cluster: ClusterView, spec: FaultSpec, rng: random.Random) -> dict[str, Any]:
        """Steps 1-5 of the module docstring; return what was done, or what was skipped and why."""
        async def opening() -> tuple[dict[str, str], set[str], dict[str, Any]] | None:
            with contextlib.suppress(*TRANSPORT_ERRORS):
                st = await master_status(cluster)
                members = st["members"]
                live = {m for m, r in members.items() if r["state"] in ("normal", "bootstrapping") and r["alive"]}
                ready = {t: tab for t, tab in st["tablets"].items()
                         if tab["migration"] is None and tab["status"] == "steady" and tab["leader"] in live
                         and tab["up"] and sorted(tab["up"]) == sorted(tab["acting"]) and len(tab["acting"]) >= 3
                         and set(tab["acting"]) <= live and live - set(tab["up"])}
                if ready:
                    return {m: r["name"] for m, r in members.items()}, live, ready
            return None

        deadline = time.monotonic() + SETTLE_WAIT_S
        why = f"no settled tablet of 3+ live replicas with a spare live node within {SETTLE_WAIT_S} s"
        while True:  # the master's "alive" lags a kill: a spare it names may refuse the delay, then look again
            found = await poll_until(opening, deadline - time.monotonic(), POLL_S)
            if found is None:
                return {"target": spec.target, "skipped": why}
            name, live, ready = found
            t = rng.choice(sorted(ready, key=int))
            tab = ready[t]
            leader = tab["leader"]
            dst = rng.choice(sorted(live - set(tab["up"])))
            src = rng.choice(sorted(m for m in tab["acting"] if m != leader))
            out: dict[str, Any] = {"target": spec.target, "tablet": int(t), "destination": name[dst],
                                   "moved_from": name[src], "old_leader": name[leader], "epoch": tab["epoch"],
                                   "delay_reasserted": 0}
            try:
                await self._set_delay(cluster, name[dst], COPY_DELAY_S)
                break
            except TRANSPORT_ERRORS as e:
                why = f"set_copy_delay on {name[dst]} failed: {e}"
                await asyncio.sleep(POLL_S)
        try:
            return await self._fail_over_during_copy(cluster, t, tab, name, src, dst, out)
        finally:
            await self._reset_delays(cluster)

    async def _fail_over_during_copy(self, cluster: ClusterView, t: str, tab: dict[str, Any], name: dict[str, str],
                                     src: str, dst: str, out: dict[str, Any]) -> dict[str, Any]:
        """Steps 2-5, once the destination's copies are slowed."""
        leader, d = tab["leader"], name[dst]
        try:
            res = await admin(cluster, "move_replica", {"tablet": int(t), "from": src, "to": dst,
                                                        "config_id": tab["config_id"]})
            out["up"] = res["up"]
        except (RpcError, TimeoutError, OSError) as e:
            return {**out, "skipped": f"move_replica refused: {getattr(e, 'code', e)}"}

        async def copying() -> dict[str, Any] | None:
            await self._hold_delay(cluster, d, out)
            rep = await replica_summary(cluster, d, t)
            return rep if rep is not None and rep.get("status") == "copying" else None

        if await poll_until(copying, STAGE_WAIT_S) is None:
            return {**out, "skipped": f"{d} never reported the tablet copying within {STAGE_WAIT_S} s"}
        await asyncio.sleep(DOWNLOAD_S)  # the download from L takes milliseconds; the merge waits COPY_DELAY_S
        now = (await master_status(cluster))["tablets"][t]
        epoch = int(now["epoch"])
        # The leader now, the copy's source: the tablet may have changed leaders since the opening (a window
        # once killed the opening's leader, no longer leading, and the copy merged under the leader it had).
        leader = now["leader"] if now.get("leader") in name else leader
        self._killed.append(name[leader])  # before the kill: a run that ends during it must still restart it
        await cluster.processes.kill(name[leader])
        out["killed"], out["killed_at_epoch"] = name[leader], epoch
        started = time.monotonic()

        async def adopted() -> dict[str, Any] | None:
            await self._hold_delay(cluster, d, out)
            rep = await replica_summary(cluster, d, t)
            if rep is None or (rep.get("status") == "copying" and int(rep.get("epoch", -1)) <= epoch):
                return None
            return rep

        rep = await poll_until(adopted, COPY_DELAY_S + 1.0)
        if rep is None or rep.get("status") != "copying":
            out["skipped"] = ("the copy ended before a new leader reached it" if rep is not None else
                              f"{d} neither adopted a newer epoch nor ended its copy")
        else:
            out["adopted"] = {"epoch": rep["epoch"], "after_s": round(time.monotonic() - started, 2)}

        async def copy_ended() -> dict[str, Any] | None:
            rep = await replica_summary(cluster, d, t)
            return rep if rep is not None and rep.get("status") != "copying" else None

        end = await poll_until(copy_ended, COPY_END_WAIT_S)
        out["copy_ended"] = ({"state": end.get("state"), "status": end.get("status"), "epoch": end.get("epoch")}
                             if end is not None else None)
        await self._restart_killed(cluster)
        out["restarted"] = name[leader]
        return out

    async def _restart_killed(self, cluster: ClusterView) -> list[str]:
        started, self._killed = self._killed, []
        for node in started:
            await cluster.processes.start(node)
        return started

    async def _reset_delays(self, cluster: ClusterView, nodes: Sequence[str] | None = None) -> list[str]:
        """Put the copy delay back to 0 on ``nodes`` (default: those this fault slowed); the nodes reset. A
        node that does not answer stays on the list for the next stop or heal: it saved the delay, and keeps
        it across restarts."""
        todo = list(nodes) if nodes is not None else sorted(set(self._delayed))
        done: list[str] = []
        for node in todo:
            with contextlib.suppress(*TRANSPORT_ERRORS):
                await node_call(cluster, node, "set_copy_delay", {"seconds": 0})
                done.append(node)
        self._delayed = [n for n in self._delayed if n not in done]
        return done

    async def stop(self, cluster: ClusterView) -> dict[str, Any]:
        """Start the killed leader if it is still down, and undo every copy delay this fault set."""
        started = await self._restart_killed(cluster)
        reset = await self._reset_delays(cluster)
        return {"started": started, "delay_reset": reset}

    async def heal(self, cluster: ClusterView) -> None:
        """Start the killed leader, put every node's copy delay back to 0, and wait (bounded) until no
        migration is in flight."""
        await self._restart_killed(cluster)
        await self._reset_delays(cluster, list(cluster.nodes()))

        async def settled() -> bool:
            with contextlib.suppress(*TRANSPORT_ERRORS):
                tabs = (await master_status(cluster))["tablets"].values()
                return all(tab["migration"] is None for tab in tabs)
            return False

        await poll_until(settled, SETTLE_S)


def package() -> CopyFailoverNemesis:
    """The copy-failover fault package."""
    return CopyFailoverNemesis()
