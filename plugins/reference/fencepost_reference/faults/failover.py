"""Failover fault: let a follower fall behind, then kill the leader just before it rejoins.

Plain kills and partitions rarely open the window that election bugs need: on loopback every follower
keeps up, so all candidates hold the same head. This fault makes the candidates differ:

1. isolate one follower F of the busiest leader L from the other nodes, while clients keep writing;
2. after a lag of 1-3 s, SIGKILL L and at once heal the network (killing first, so F cannot catch up).

The operator must now pick the new leader from F (behind) and the other follower G (up to date). A
correct election takes the highest head (G); one that takes any fenced node may take F and truncate
acknowledged entries, which the amnesia and log checkers report as lost. The window's end restarts L.
Targets: ``lagging-follower`` (as above); ``lagging-follower-slow-peer`` (as above, and G is paused for
1.5 s as L dies, so F answers the election first: a correct operator waits for a fence majority and
still picks G); ``lagging-leader`` (the lagging node is killed instead of the leader, so the leader must
re-admit it by catch-up).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from typing import Any

from fencepost import NETWORK, PROCESSES, ClusterView, FaultSpec, busiest_leader, complete_grudge

TARGETS = ("lagging-follower", "lagging-follower-slow-peer", "lagging-leader")
LAG_S = (1.0, 3.0)
PEER_PAUSE_S = 1.5


class FailoverNemesis:
    """Lag a follower, then kill the leader and heal the network."""

    name = "failover"
    color = "#d62828"
    needs = frozenset({NETWORK, PROCESSES})

    def __init__(self) -> None:
        self._killed: list[str] = []

    def targets(self) -> Sequence[str]:
        """lagging-follower (kill the leader) or lagging-leader (kill the lagging node)."""
        return TARGETS

    async def start(self, cluster: ClusterView, spec: FaultSpec, rng: random.Random) -> dict[str, Any]:
        """Isolate a follower, wait, kill and heal; return what was done."""
        nodes = sorted(cluster.nodes())
        leader = await busiest_leader(cluster) or rng.choice(nodes)
        followers = [n for n in nodes if n != leader]
        if not followers:
            return {"target": spec.target, "skipped": "a single node has no follower"}
        lagging = rng.choice(followers)
        lag = round(rng.uniform(*LAG_S), 2)
        await cluster.network.partition(complete_grudge([[lagging], [n for n in nodes if n != lagging]]))
        await asyncio.sleep(lag)
        victim = lagging if spec.target == "lagging-leader" else leader
        peer = [n for n in followers if n != lagging][:1] if spec.target == "lagging-follower-slow-peer" else []
        for node in peer:
            await cluster.processes.pause(node)
        try:
            # Kill before healing: once the network heals, the leader's cursor catches the lagging
            # follower up within milliseconds, and the candidates' heads would be equal again.
            self._killed.append(victim)  # before the kill: a run that ends during it must still restart it
            await cluster.processes.kill(victim)
            await cluster.network.heal()
            if peer:
                await asyncio.sleep(PEER_PAUSE_S)
        finally:
            for node in peer:
                await cluster.processes.resume(node)
        return {"target": spec.target, "leader": leader, "lagging": lagging, "lag_s": lag, "killed": victim,
                "paused": peer}

    async def stop(self, cluster: ClusterView) -> dict[str, Any]:
        """Start the killed node again."""
        started, self._killed = self._killed, []
        for node in started:
            await cluster.processes.start(node)
        return {"started": started}

    async def heal(self, cluster: ClusterView) -> None:
        """Heal the network and start every node this fault killed."""
        await cluster.network.heal()
        await self.stop(cluster)


def package() -> FailoverNemesis:
    """The failover fault package."""
    return FailoverNemesis()
