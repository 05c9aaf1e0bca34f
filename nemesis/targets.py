"""Resolve a fault's target choice ("one", "minority", "leader", ...) into concrete nodes."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence

from harness.protocols import Backend

PROCESS_TARGETS = ("one", "minority", "majority", "all", "leader")


async def busiest_leader(backend: Backend) -> str | None:
    """The node leading the most tablets right now, or None if no tablet has a leader."""
    leaders = await backend.leaders()
    if not leaders:
        return None
    return Counter(leaders.values()).most_common(1)[0][0]


async def choose_nodes(backend: Backend, target: str, rng: random.Random) -> list[str]:
    """The nodes a kill or pause hits for ``target``; "leader" falls back to one random node."""
    nodes = sorted(backend.nodes())
    n = len(nodes)
    if target == "leader":
        leader = await busiest_leader(backend)
        return [leader] if leader is not None else [rng.choice(nodes)]
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
