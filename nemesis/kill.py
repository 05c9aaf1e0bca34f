"""Kill fault: SIGKILL one, a minority, a majority, all, or the leader; restart them when it stops."""

from __future__ import annotations

from harness.cluster_view import ClusterView
from nemesis.process_fault import ProcessFault


async def _kill(cluster: ClusterView, node: str) -> None:
    await cluster.processes.kill(node)


async def _start(cluster: ClusterView, node: str) -> None:
    await cluster.processes.start(node)


def package() -> ProcessFault:
    """The kill fault package: nodes die with SIGKILL and restart with their data."""
    return ProcessFault("kill", "#e4572e", _kill, _start, "killed", "started")
