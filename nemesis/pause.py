"""Pause fault: SIGSTOP one, a minority, a majority, all, or the leader; SIGCONT them when it stops."""

from __future__ import annotations

from harness.cluster_view import ClusterView
from nemesis.process_fault import ProcessFault


async def _pause(cluster: ClusterView, node: str) -> None:
    await cluster.processes.pause(node)


async def _resume(cluster: ClusterView, node: str) -> None:
    await cluster.processes.resume(node)


def package() -> ProcessFault:
    """The pause fault package: a long GC pause or a stalled VM."""
    return ProcessFault("pause", "#f3a712", _pause, _resume, "paused", "resumed")
