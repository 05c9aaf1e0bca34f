"""Partition fault: halves, random halves, one node isolated, the leader isolated, majorities ring, bridge.

``leader-alone`` cuts the busiest leader off from the other nodes *and* from the control plane (the
system's processes of role control), while clients still reach it: the classic stale-leader window, where
the rest of the cluster elects a new leader and the old one must not serve reads or acknowledge writes.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from harness.capabilities import NETWORK
from harness.cluster import Cluster
from harness.protocols import FaultSpec
from harness.systems.api import CONTROL
from harness.targets import busiest_leader, complete_grudge

TARGETS = ("halves", "random-halves", "one", "leader", "majorities-ring", "bridge", "leader-alone")


def grudge_for(
    target: str, nodes: Sequence[str], rng: random.Random, leader: str | None = None,
    operators: Sequence[str] = (),
) -> dict[str, list[str]]:
    """The grudge (node -> nodes it cannot reach) for a partition shape, as in Jepsen's nemesis.

    Only ``leader-alone`` uses ``operators`` (the control plane): they join the majority side.
    """
    nodes = sorted(nodes)
    n = len(nodes)
    if target == "leader-alone":
        lone = leader if leader in nodes else rng.choice(nodes)
        return complete_grudge([[lone], [x for x in nodes if x != lone] + sorted(operators)])
    if target == "halves":
        return complete_grudge([nodes[: n // 2], nodes[n // 2 :]])
    if target == "random-halves":
        shuffled = rng.sample(nodes, n)
        return complete_grudge([shuffled[: n // 2], shuffled[n // 2 :]])
    if target in ("one", "leader"):
        lone = leader if target == "leader" and leader in nodes else rng.choice(nodes)
        return complete_grudge([[lone], [x for x in nodes if x != lone]])
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
    raise ValueError(f"unknown partition {target!r}; expected one of {', '.join(TARGETS)}")


class PartitionNemesis:
    """Cut network links between nodes, then heal them."""

    name = "partition"
    color = "#7b2cbf"
    needs = frozenset({NETWORK})

    def targets(self) -> Sequence[str]:
        """The partition shapes a window may use."""
        return TARGETS

    async def start(self, cluster: Cluster, spec: FaultSpec, rng: random.Random) -> dict[str, Any]:
        """Apply the partition."""
        leader = await busiest_leader(cluster) if spec.target in ("leader", "leader-alone") else None
        grudge = grudge_for(spec.target, cluster.nodes(), rng, leader, cluster.members(CONTROL))
        await cluster.network.partition(grudge)
        return {"target": spec.target, "grudge": grudge}

    async def stop(self, cluster: Cluster) -> dict[str, Any]:
        """Heal the network."""
        await cluster.network.heal()
        return {"healed": True}

    async def heal(self, cluster: Cluster) -> None:
        """Heal the network."""
        await cluster.network.heal()


def package() -> PartitionNemesis:
    """The partition fault package."""
    return PartitionNemesis()
