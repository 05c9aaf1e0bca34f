"""Pause fault: SIGSTOP one, a minority, a majority, all, or the leader; SIGCONT them when it stops."""

from __future__ import annotations

from harness.protocols import Backend
from nemesis.process_fault import ProcessFault


async def _pause(backend: Backend, node: str) -> None:
    await backend.pause(node)


async def _resume(backend: Backend, node: str) -> None:
    await backend.resume(node)


def package() -> ProcessFault:
    """The pause fault package: a long GC pause or a stalled VM."""
    return ProcessFault("pause", "#f3a712", _pause, _resume, "paused", "resumed")
