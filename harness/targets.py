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


async def busiest_leader(cluster: ClusterView) -> str | None:
    """The node leading the most (the system's first primary) right now, or None when none is known or the
    run has no primaries capability."""
    if not cluster.has(PRIMARIES):
        return None
    primaries = await cluster.primaries()
    return primaries[0] if primaries else None


async def choose_nodes(cluster: ClusterView, target: str, rng: random.Random) -> list[str]:
    """The nodes a kill or pause hits for ``target``; "leader" falls back to one random node."""
    nodes = sorted(cluster.nodes())
    n = len(nodes)
    if target in ("leader", LEADER_AND_CONTROL):
        leader = await busiest_leader(cluster)
        chosen = [leader] if leader is not None else [rng.choice(nodes)]
        return chosen + (cluster.members(CONTROL) if target == LEADER_AND_CONTROL else [])
    count = {"one": 1, "minority": max(1, (n - 1) // 2), "majority": n // 2 + 1, "all": n}.get(target)
    if count is None:
        raise ValueError(f"unknown target {target!r}; expected one of {', '.join(PROCESS_TARGETS)}")
    return sorted(rng.sample(nodes, count))


def complete_grudge(components: Sequence[Sequence[str]]) -> dict[str, list[str]]:
    """A grudge that cuts every link between different components."""
    grudge: dict[str, list[str]] = {}
    for comp in components:
        others = [node for other in components if other is not comp for node in other]
        for node in comp:
            grudge[node] = sorted(others)
    return grudge
