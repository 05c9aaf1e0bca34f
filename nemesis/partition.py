"""Partition fault: halves, random halves, one node isolated, the leader isolated, majorities ring, bridge.

The default campaign also offers (``mix_targets``, so that the recipes' schedules stay as they were)
``follower``, one node other than the leader cut off from the other nodes, and ``minority``, a random
minority of the nodes cut off from the majority, whatever the number of nodes (``halves`` of four nodes is
two against two: no side has a majority). Clients reach every node under every partition.

``leader-alone`` cuts the busiest leader off from the other nodes *and* from the control plane (the
system's processes of role control), while clients still reach it: the classic stale-leader window, where
the rest of the cluster elects a new leader and the old one must not serve reads or acknowledge writes.

``leader-deposed``, offered to the default campaign in its place (``mix_targets``), is that cut held until the
system names another leader in the cut-off node's place (at most :data:`DEPOSE_WAIT_S`), and then
:data:`DEPOSED_HOLD_S` longer, whatever the window's length: a stale leader shows only once a new one
takes writes, and a window of the mix's usual length often ends before the election does.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Sequence
from typing import Any

from harness.capabilities import NETWORK, PRIMARIES
from harness.cluster_view import ClusterView
from harness.polling import poll_until
from harness.process_spec import CONTROL
from harness.protocols import FaultSpec
from harness.targets import FOLLOWER, busiest_leader, complete_grudge, follower_of

TARGETS = ("halves", "random-halves", "one", "leader", "majorities-ring", "bridge", "leader-alone")
DEPOSED = "leader-deposed"
MINORITY = "minority"
"""A random minority (``(n - 1) // 2`` nodes, at least one) cut off from the rest: a majority/minority split."""
DEPOSE_WAIT_S = 15.0
"""How long a ``leader-deposed`` cut waits for another leader before it gives up and heals with its window."""
DEPOSED_HOLD_S = 6.0
"""How long a ``leader-deposed`` cut holds after the new leader is named: two rounds of client timeouts (3 s
for the reference client). A worker reopens its client after an indeterminate result, and a routing client
starts again from some node, which may be the old leader: each round sends a few clients back to it, where
a read after the new leader's writes is stale. At 3 s, one round fit, and the default campaign seldom
caught ``stale-leader-reads``."""
LEADER_WAIT_S = 5.0
"""How long a ``leader-deposed`` window waits for the system to name a leader to cut off (none is known while
its control plane restarts, or while every tablet is electing)."""
POLL_S = 0.2
PARTITION_WEIGHT = 4.0
"""How often the default campaign picks a partition, against 1 for the other blunt packages (2 for aimed
ones): a partition is Jepsen's first fault, and a stale leader's window opens only under one (at 1, a
120 s plan seldom held a leader-alone cut)."""


def _lone(nodes: Sequence[str], leader: str | None, rng: random.Random) -> str:
    """The node a one-node cut isolates: ``leader`` when it is one of ``nodes``, else a random one."""
    return leader if leader is not None and leader in nodes else rng.choice(nodes)


def grudge_for(
    target: str, nodes: Sequence[str], rng: random.Random, leader: str | None = None,
    operators: Sequence[str] = (),
) -> dict[str, list[str]]:
    """The grudge (node -> nodes it cannot reach) for a partition shape, as in Jepsen's nemesis.

    Only ``leader-alone`` uses ``operators`` (the control plane): they join the majority side.
    """
    nodes = sorted(nodes)
    n = len(nodes)
    if target in ("leader-alone", DEPOSED):
        lone = _lone(nodes, leader, rng)
        return complete_grudge([[lone], [x for x in nodes if x != lone] + sorted(operators)])
    if target == "halves":
        return complete_grudge([nodes[: n // 2], nodes[n // 2 :]])
    if target == "random-halves":
        shuffled = rng.sample(nodes, n)
        return complete_grudge([shuffled[: n // 2], shuffled[n // 2 :]])
    if target in ("one", "leader"):
        lone = _lone(nodes, leader if target == "leader" else None, rng)
        return complete_grudge([[lone], [x for x in nodes if x != lone]])
    if target == FOLLOWER:
        lone = follower_of(nodes, leader, rng)
        return complete_grudge([[lone], [x for x in nodes if x != lone]])
    if target == MINORITY:
        few = sorted(rng.sample(nodes, max(1, (n - 1) // 2)))
        return complete_grudge([few, [x for x in nodes if x not in few]])
    if target == "majorities-ring":
        # Each node sees a majority (itself and its nearest ring neighbours), and no two see the same one.
        ring = rng.sample(nodes, n)
        reach = n // 2 + 1
        grudge: dict[str, list[str]] = {}
        for i, node in enumerate(ring):
            visible = {ring[(i + d) % n] for d in range(-(reach // 2), reach - reach // 2)}
            grudge[node] = sorted(set(nodes) - visible)
        return grudge
    if target == "bridge":
        # Two halves that cannot see each other, and one node in the middle that sees both.
        shuffled = rng.sample(nodes, n)
        middle = shuffled[0]
        rest = shuffled[1:]
        left, right = rest[: len(rest) // 2], rest[len(rest) // 2 :]
        grudge = complete_grudge([left, right])
        grudge[middle] = []
        return grudge
    known = (*TARGETS, DEPOSED, FOLLOWER, MINORITY)
    raise ValueError(f"unknown partition {target!r}; expected one of {', '.join(known)}")


class PartitionNemesis:
    """Cut network links between nodes, then heal them."""

    name = "partition"
    color = "#7b2cbf"
    needs = frozenset({NETWORK})
    generic = True
    """A fault of any system, not aimed at one protocol window: the default campaign weighs it 1."""
    mix_targets = (*(DEPOSED if t == "leader-alone" else t for t in TARGETS), FOLLOWER, MINORITY)
    mix_weight = PARTITION_WEIGHT
    weights = {DEPOSED: 12.0}
    """The stale-leader window weighs four times the other leader targets. A stale leader shows only
    after the new one is named, while a client that still routes to the old one reads there (see
    :data:`DEPOSED_HOLD_S`): at lower odds, few such windows came, and few of those caught
    stale-leader-reads."""

    def targets(self) -> Sequence[str]:
        """The partition shapes a window may use."""
        return TARGETS

    async def start(self, cluster: ClusterView, spec: FaultSpec, rng: random.Random) -> dict[str, Any]:
        """Apply the partition (for ``leader-deposed``, and hold it until the leader is replaced)."""
        if spec.target == DEPOSED:
            return await self._depose(cluster, rng)
        leader = await busiest_leader(cluster) if spec.target in ("leader", "leader-alone", FOLLOWER) else None
        grudge = grudge_for(spec.target, cluster.nodes(), rng, leader, cluster.members(CONTROL))
        await cluster.network.partition(grudge)
        return {"target": spec.target, "grudge": grudge}

    @staticmethod
    async def _depose(cluster: ClusterView, rng: random.Random) -> dict[str, Any]:
        """Cut off the busiest leader, waiting up to :data:`LEADER_WAIT_S` for one to be known: a node that
        leads nothing has nothing to be deposed from, and its window would end at once."""
        async def known_leader() -> str | None:
            leader = await busiest_leader(cluster)
            return leader if leader in cluster.nodes() else None

        lone: str | None = await poll_until(known_leader, LEADER_WAIT_S, POLL_S)
        if lone is None:
            return {"target": DEPOSED, "skipped": f"no leader known within {LEADER_WAIT_S:g} s"}
        grudge = grudge_for(DEPOSED, cluster.nodes(), rng, lone, cluster.members(CONTROL))
        await cluster.network.partition(grudge)
        after = await deposed(cluster, lone, DEPOSE_WAIT_S)
        if after is not None:
            await asyncio.sleep(DEPOSED_HOLD_S)
        return {"target": DEPOSED, "grudge": grudge, "lone": lone, "deposed_after_s": after}

    async def stop(self, cluster: ClusterView) -> dict[str, Any]:
        """Heal the network."""
        await cluster.network.heal()
        return {"healed": True}

    async def heal(self, cluster: ClusterView) -> None:
        """Heal the network."""
        await cluster.network.heal()


async def deposed(cluster: ClusterView, node: str, timeout: float) -> float | None:
    """Wait (at most ``timeout`` s) until the system names primaries and ``node`` is not among them; the
    seconds waited, or None (also when the run has no primaries capability). An empty answer (no control
    plane answered, or every shard is electing) names no one in the node's place, so it does not count."""
    if not cluster.has(PRIMARIES):
        return None
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        try:
            named = await cluster.primaries()
            if named and node not in named:
                return round(time.monotonic() - started, 3)
        except Exception:  # a system that cannot say now has not deposed it as far as we know
            pass
        await asyncio.sleep(POLL_S)
    return None


def package() -> PartitionNemesis:
    """The partition fault package."""
    return PartitionNemesis()
