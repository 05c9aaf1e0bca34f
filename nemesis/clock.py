"""Clock fault: bump, skew or strobe the data nodes' wall clocks; put them back when the window ends.

Nodes run under libfaketime (:mod:`harness.backends.faketime`; the backend prepares it because this
package ``needs`` the clock capability) and read their offset from a file the backend rewrites:

- ``bump``: one node's clock jumps ahead or behind by 1 to 120 seconds, as an NTP step would;
- ``skew``: every node gets its own offset of up to 30 seconds either way (no two nodes agree);
- ``strobe``: one node's clock flips between real time and an offset of up to 5 seconds every 10 to
  200 ms, until the window ends (a background task, bounded to ``STROBE_MAX_S`` in any case).

Only the wall clock moves; the monotonic clock, which timeouts and the failure detector use, does not
(see the faketime module for why). The system must stay safe whatever the nodes' clocks say.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import Sequence
from typing import Any

from harness.capabilities import CLOCK
from harness.cluster_view import ClusterView
from harness.protocols import FaultSpec

TARGETS = ("bump", "skew", "strobe")
MAX_BUMP_S = 120.0
MAX_SKEW_S = 30.0
MAX_STROBE_DELTA_S = 5.0
STROBE_PERIOD_S = (0.01, 0.2)
STROBE_MAX_S = 600.0
"""A strobe never outlives this, even if nobody stops it."""


def plan(target: str, nodes: Sequence[str], rng: random.Random) -> dict[str, Any]:
    """What a window does for ``target``: the offsets to set, and for a strobe its delta and period.

    Raises:
        ValueError: an unknown target.
    """
    nodes = sorted(nodes)

    def sign() -> float:
        return rng.choice((-1.0, 1.0))

    if target == "bump":
        return {"offsets": {rng.choice(nodes): sign() * round(rng.uniform(1.0, MAX_BUMP_S), 3)}}
    if target == "skew":
        return {"offsets": {n: round(rng.uniform(-MAX_SKEW_S, MAX_SKEW_S), 3) for n in nodes}}
    if target == "strobe":
        return {"node": rng.choice(nodes), "delta": sign() * round(rng.uniform(0.2, MAX_STROBE_DELTA_S), 3),
                "period": round(rng.uniform(*STROBE_PERIOD_S), 3)}
    raise ValueError(f"unknown target {target!r}; expected one of {', '.join(TARGETS)}")


async def strobe(cluster: ClusterView, node: str, delta: float, period: float, limit_s: float = STROBE_MAX_S) -> int:
    """Flip ``node``'s clock between +``delta`` and real time every ``period`` seconds for at most
    ``limit_s``; leave it at real time; return how many flips were made."""
    flips = 0
    try:
        for flips in range(1, max(1, int(limit_s / period)) + 1):
            await cluster.clock.set_offset(node, delta if flips % 2 else 0.0)
            await asyncio.sleep(period)
    finally:
        await asyncio.shield(cluster.clock.set_offset(node, 0.0))
    return flips


class ClockNemesis:
    """Move the data nodes' wall clocks."""

    name = "clock"
    color = "#2a9d8f"
    needs = frozenset({CLOCK})
    generic = True
    """A fault of any system, not aimed at one protocol window: the default campaign weighs it 1."""

    def __init__(self) -> None:
        self._touched: set[str] = set()
        self._strobe: asyncio.Task[int] | None = None

    def targets(self) -> Sequence[str]:
        """bump (one node jumps), skew (every node its own offset) or strobe (one node flips back and forth)."""
        return TARGETS

    async def start(self, cluster: ClusterView, spec: FaultSpec, rng: random.Random) -> dict[str, Any]:
        """Set the offsets the plan draws (or start the strobe); say which."""
        p = plan(spec.target, cluster.nodes(), rng)
        if spec.target == "strobe":
            await self._stop_strobe()
            self._touched.add(p["node"])
            self._strobe = asyncio.create_task(strobe(cluster, p["node"], p["delta"], p["period"]))
        for node, offset in p.get("offsets", {}).items():
            self._touched.add(node)
            await cluster.clock.set_offset(node, offset)
        return {"target": spec.target, **p}

    async def _stop_strobe(self) -> None:
        task, self._strobe = self._strobe, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def stop(self, cluster: ClusterView) -> dict[str, Any]:
        """Stop any strobe and put every clock this package moved back to real time."""
        await self._stop_strobe()
        reset = sorted(self._touched)
        for node in reset:
            await cluster.clock.set_offset(node, 0.0)
        self._touched.clear()
        return {"reset": reset}

    async def heal(self, cluster: ClusterView) -> None:
        """Stop any strobe and put every node's clock back to real time."""
        await self._stop_strobe()
        self._touched.clear()
        for node in cluster.nodes():
            await cluster.clock.set_offset(node, 0.0)


def package() -> ClockNemesis:
    """The clock fault package."""
    return ClockNemesis()
