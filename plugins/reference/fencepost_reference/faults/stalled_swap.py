"""Stalled-swap fault: a node swap stalls after the leader applied it, and the leader is cut off with
the new node (Oxia's fencing ensemble).

The Oxia design fences, in an election that resolves a stalled swap, the current ensemble *and* the new
node: the leader may already replicate to the new ensemble, and a majority of the old one alone can be
disjoint from a majority of the new one. Plain faults never stall a swap at that step, so this fault does:

1. pick a tablet with leader L and followers F, G, and a node N outside its ensemble;
2. ask the operator to swap G for N, with the test hook ``crash_at="reconfig:after-commit"``: L applies the
   swap (its ensemble is now L, F, N) and the operator exits before it records the end;
3. cut L and N off from every other node and from the operators, then start the operator again: it sees
   the stalled swap and runs an election;
4. wait for that election; if it elects a leader (it must not: only F and G can answer), ask the operator
   to swap L, now unreachable, for G, as failure detection would.

A correct election needs a fence majority of L, F, G and N, so it waits for the partition to heal, and the
swap in step 4 is refused. One that fences only the old ensemble elects F from F and G; after step 4, F
commits with G while L commits with N: two leaders acknowledge writes, which the linearizability checker
reports. The window's end heals the network and starts the operator if it is down.

The stall is in the damage guard's turn, which it waits for up to ``STALL_WAIT_S`` (for the last damage to
be repaired and visible, never for another fault's turn); a window that does not get the turn swaps a
follower unstalled instead (``stall_refused`` says why), so that the operator's swap path is exercised
either way.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Sequence
from typing import Any

from fencepost import CONTROL, NETWORK, PROCESSES, ClusterView, FaultSpec, complete_grudge
from fencepost_reference.faults.guard import guard_of
from fencepost_reference.info import await_election, operator_call, process_of
from fencepost_reference.membership import swap_follower
from system.wire import RpcError

TARGETS = ("leader-with-new-node",)
ATTEMPTS = 3
ELECTION_WAIT_S = 15.0
SPLIT_S = 3.0
STALL_WAIT_S = 15.0
"""How long a stall waits in the damage guard's turn for the last damage to be repaired and visible. Without
the wait, ``fence-current-ensemble-only`` went uncaught in the default campaign: each later window found a
migration under way or a damage under ``VISIBLE_S`` old, and swapped unstalled."""


class StalledSwapNemesis:
    """Stall a swap after the leader applied it, and cut the leader off with the new node."""

    name = "stalled-swap"
    color = "#8338ec"
    needs = frozenset({NETWORK, PROCESSES})

    def __init__(self, wait_s: float = STALL_WAIT_S) -> None:
        self._operator_down: list[str] = []
        self.wait_s = wait_s
        """How long a start waits for the damage guard's turn before it swaps unstalled."""

    def targets(self) -> Sequence[str]:
        """leader-with-new-node: the only shape."""
        return TARGETS

    async def start(self, cluster: ClusterView, spec: FaultSpec, rng: random.Random) -> dict[str, Any]:
        """Stall a swap, partition, restart the operator, and act on the election it holds; in the damage
        guard's turn (waiting up to :attr:`wait_s` for it), since the stall makes elections of its tablet
        fence four nodes, three of which must answer: with a replica damaged meanwhile, or not yet repaired,
        none could (the clean default campaign once stalled a swap onto a tombstone just after a node lost
        its metadata, and the tablet never elected again)."""
        async with guard_of(cluster).turn(cluster, self.wait_s, damage=False) as why:
            if why is None:
                return await self._stall(cluster, spec, rng)
        return {"target": spec.target, "stall_refused": why, **await self._unstalled(cluster, rng)}

    @staticmethod
    async def _unstalled(cluster: ClusterView, rng: random.Random) -> dict[str, Any]:
        """The window the guard refused still swaps, unstalled, as an admin would (:func:`swap_follower`):
        the guard is nearly always busy in the default campaign (another damage in progress, or one under
        ``VISIBLE_S`` old), and a window that only skips leaves the operator's swap path untested (when it
        skipped, almost no window struck, the mutation sample's runs among them, so mutants of that path
        went unseen)."""
        status = await operator_call(cluster, "status", {})
        tablets = sorted(status["tablets"], key=int)
        if not tablets:
            return {"skipped": "the operator reports no tablets"}
        t = int(rng.choice(tablets))
        return {"tablet": t, "swap": await swap_follower(cluster, t, rng)}

    async def _stall(self, cluster: ClusterView, spec: FaultSpec, rng: random.Random) -> dict[str, Any]:
        routing = await operator_call(cluster, "routing", {})
        status = await operator_call(cluster, "status", {})
        # Routing names processes, the operator's calls take member ids: a node that rejoined after a wipe
        # is member n3~2 of process n3.
        member = {process_of(m): m for m, up in status["alive"].items() if up}
        live = sorted(member)
        ready = {t: tab for t, tab in routing["tablets"].items()
                 if tab["status"] == "steady" and tab["leader"] and len(tab["ensemble"]) == 3
                 and not status["tablets"][t].get("reconfig") and all(n in live for n in tab["ensemble"])
                 and any(n not in tab["ensemble"] for n in live)}
        if not ready:
            return {"target": spec.target, "skipped": "no steady tablet with three live replicas and a spare node"}
        ops = cluster.members(CONTROL)
        if not cluster.processes.running(ops[0]):
            return {"target": spec.target, "skipped": f"the active operator {ops[0]} is down"}
        refused: list[str] = []
        for t in rng.sample(sorted(ready, key=int), min(ATTEMPTS, len(ready))):
            tab = ready[t]
            leader = tab["leader"]
            stays, goes = rng.sample(sorted(n for n in tab["ensemble"] if n != leader), 2)
            new = rng.choice(sorted(n for n in live if n not in tab["ensemble"]))
            done: dict[str, Any] = {"target": spec.target, "tablet": int(t), "leader": leader, "stays": stays,
                                    "swapped_out": goes, "new": new, "epoch": tab["epoch"]}
            swap = {"tablet": int(t), "op": "swap", "old": member[goes], "new": member[new],
                    "crash_at": "reconfig:after-commit"}
            try:
                # The active operator alone: when it exits at the crash point as asked, the call must not
                # go on to a standby that another fault started (which once refused the swap while the
                # active operator stayed down for good).
                await operator_call(cluster, "reconfig", swap, active_only=True)
                return {**done, "skipped": "the operator finished the swap instead of stalling"}
            except RpcError as e:
                # e.g. the new node holds a tombstone of this tablet from an earlier move: try another
                refused.append(f"tablet {t} to {new}: {e.code}: {e.message}")
                continue
            except RuntimeError:
                break  # the operator exited at the crash point, as asked
        else:
            return {"target": spec.target, "skipped": "every swap was refused", "refused": refused}
        self._operator_down = [ops[0]]  # from here on, the window's end must start it whatever fails
        cut = [leader, new]
        rest = [n for n in cluster.nodes() if n not in cut] + ops
        await cluster.network.partition(complete_grudge([cut, rest]))
        await cluster.processes.start(ops[0])
        self._operator_down = []
        done["partitioned"] = [cut, rest]
        if refused:
            done["refused"] = refused
        elected = await await_election(cluster, t, leader, tab["epoch"], ELECTION_WAIT_S)
        if elected is None:
            return {**done, "elected": None}
        done["elected"] = elected
        done["second_swap"] = await self._swap_out(cluster, int(t), member[leader], member[goes])
        await asyncio.sleep(SPLIT_S)
        return done

    @staticmethod
    async def _swap_out(cluster: ClusterView, t: int, old: str, new: str) -> dict[str, Any]:
        """Ask the operator to swap ``old`` for ``new``, retrying while the tablet is busy (the election's
        late fence responses); what it answered."""
        deadline = time.monotonic() + ELECTION_WAIT_S
        while True:
            try:
                res = await operator_call(cluster, "reconfig", {"tablet": t, "op": "swap", "old": old, "new": new})
                return {"ensemble": res.get("ensemble"), "epoch": res.get("epoch")}
            except RpcError as e:
                if e.code != "busy" or time.monotonic() > deadline:
                    return {"error": f"{e.code}: {e.message}"}
            except RuntimeError as e:
                return {"error": str(e)}
            await asyncio.sleep(0.25)

    async def stop(self, cluster: ClusterView) -> dict[str, Any]:
        """Heal the network and start the operator if this fault left it down."""
        await cluster.network.heal()
        started, self._operator_down = self._operator_down, []
        for name in started:
            await cluster.processes.start(name)
        return {"healed": True, "started": started}

    async def heal(self, cluster: ClusterView) -> None:
        """Heal the network and start the operator if it is down."""
        await self.stop(cluster)


def package() -> StalledSwapNemesis:
    """The stalled-swap fault package."""
    return StalledSwapNemesis()
