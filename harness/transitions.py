"""Waiting for a system's transitions, so the default campaign strikes while a protocol is mid-change.

Every system with the primaries capability has ``leader-change`` (the first primary is not who it was
when the wait began) and ``no-leader`` (no primary is known: an election is under way). A system adds
its own kinds through :class:`harness.plugin_api.Transitions` (the reference system: ``election``,
``reconfiguration``, ``copy``). A wait polls every :data:`POLL_S` seconds and gives up after its time.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import TYPE_CHECKING

from harness.capabilities import PRIMARIES
from harness.plugin_api import Transitions

if TYPE_CHECKING:
    from harness.cluster_view import ClusterView

POLL_S = 0.1
GENERIC = ("leader-change", "no-leader")


def kinds(cluster: ClusterView) -> list[str]:
    """The transitions a run can wait for."""
    own = list(cluster.system.transitions()) if isinstance(cluster.system, Transitions) else []
    return (list(GENERIC) if cluster.has(PRIMARIES) else []) + own


async def _leader(cluster: ClusterView) -> str | None:
    with contextlib.suppress(Exception):
        found = await cluster.primaries()
        return found[0] if found else None
    return None


async def wait_for(cluster: ClusterView, kind: str, timeout: float) -> float | None:
    """Wait (at most ``timeout`` seconds) until a transition of ``kind`` is under way; the seconds waited, or
    None if it never came."""
    started = time.monotonic()
    first = await _leader(cluster) if kind == "leader-change" else None
    while time.monotonic() - started < timeout:
        if kind == "leader-change":
            now = await _leader(cluster)
            seen = now is not None and now != first
        elif kind == "no-leader":
            seen = await _leader(cluster) is None
        elif isinstance(cluster.system, Transitions):
            try:
                seen = await cluster.system.in_transition(cluster, kind)
            except Exception:  # a system that cannot say now is not in the transition as far as we know
                seen = False
        else:
            return None
        if seen:
            return round(time.monotonic() - started, 3)
        await asyncio.sleep(POLL_S)
    return None
