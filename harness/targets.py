"""Resolve a fault's target choice ("one", "minority", "leader", ...) into concrete nodes.

Shared by the generic fault packages and by systems' own: the leader comes from the system's
primaries capability when the run has it.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TYPE_CHECKING

from harness.capabilities import PRIMARIES
from harness.process_spec import CONTROL

if TYPE_CHECKING:
    from harness.cluster_view import ClusterView

PROCESS_TARGETS = ("one", "minority", "majority", "all", "leader")
LEADER_AND_CONTROL = "leader+control"
"""The leader together with every control-plane process (the default campaign's extra process target)."""
FOLLOWER = "follower"
"""One node that is not the leader (a random node when none is known): a default-campaign target, so that its
classics can kill, pause or cut off a follower where ``one`` may hit the leader."""


async def busiest_leader(cluster: ClusterView) -> str | None:
    """The node leading the most (the system's first primary) right now, or None when none is known or the
    run has no primaries capability."""
    if not cluster.has(PRIMARIES):
        return None
    primaries = await cluster.primaries()
    return primaries[0] if primaries else None


def follower_of(nodes: Sequence[str], leader: str | None, rng: random.Random) -> str:
    """One of ``nodes`` other than ``leader``, drawn by ``rng``; any of them when the leader is unknown or alone."""
    others = [n for n in sorted(nodes) if n != leader]
    return rng.choice(others or sorted(nodes))


async def choose_nodes(cluster: ClusterView, target: str, rng: random.Random) -> list[str]:
    """The nodes a kill or pause hits for ``target``; "leader" falls back to one random node, "follower" is one
    node other than the leader (any node when none is known)."""
    nodes = sorted(cluster.nodes())
    n = len(nodes)
    if target == FOLLOWER:
        return [follower_of(nodes, await busiest_leader(cluster), rng)]
    if target in ("leader", LEADER_AND_CONTROL):
        leader = await busiest_leader(cluster)
        chosen = [leader] if leader is not None else [rng.choice(nodes)]
        return chosen + (cluster.members(CONTROL) if target == LEADER_AND_CONTROL else [])
    count = {"one": 1, "minority": max(1, (n - 1) // 2), "majority": n // 2 + 1, "all": n}.get(target)
    if count is None:
        known = (*PROCESS_TARGETS, FOLLOWER, LEADER_AND_CONTROL)
        raise ValueError(f"unknown target {target!r}; expected one of {', '.join(known)}")
    return sorted(rng.sample(nodes, count))


def complete_grudge(components: Sequence[Sequence[str]]) -> dict[str, list[str]]:
    """A grudge that cuts every link between different components."""
    grudge: dict[str, list[str]] = {}
    for comp in components:
        others = [node for other in components if other is not comp for node in other]
        for node in comp:
            grudge[node] = sorted(others)
    return grudge
