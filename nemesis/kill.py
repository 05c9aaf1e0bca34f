"""Kill fault: SIGKILL one, a minority, a majority, all, or the leader; restart them when it stops."""

from __future__ import annotations

from harness.protocols import Backend
from nemesis.process_fault import ProcessFault


async def _kill(backend: Backend, node: str) -> None:
    await backend.kill(node)


async def _start(backend: Backend, node: str) -> None:
    await backend.start(node)


def package() -> ProcessFault:
    """The kill fault package: nodes die with SIGKILL and restart with their data."""
    return ProcessFault("kill", "#e4572e", _kill, _start, "killed", "started")
