"""Bounded polling: ask a check again and again until it answers, or a time limit passes.

Faults wait on a system this way (a leader named, a copy started, a stream synced): every wait is bounded,
so a system that never answers costs a window its limit, not the run.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

POLL_S = 0.05


async def poll_until(check: Callable[[], Awaitable[Any]], limit_s: float, every_s: float = POLL_S) -> Any:
    """Poll ``check()`` every ``every_s`` until it returns something truthy; that value, or None after
    ``limit_s``."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        got = await check()
        if got:
            return got
        await asyncio.sleep(every_s)
    return None
