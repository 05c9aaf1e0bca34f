"""Figures a bench reports: the nearest-rank quantile of measured latencies."""

from __future__ import annotations

from collections.abc import Sequence


def nearest_rank(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (``q`` in [0, 1]) of ``values`` by nearest rank, unsorted values taken as they are;
    0 for none (a bench with no ok operation reports a latency of 0)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]
