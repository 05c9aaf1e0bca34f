"""What a real reference replica answers a request, for the tests of checkers that judge its refusals."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

from system.events import EventLog
from system.replica import TabletReplica
from system.wire import RpcError


def answer(tmp_path: Path, name: str, at: int, status: str,
           request: Callable[[TabletReplica], Awaitable[object]]) -> str | None:
    """What a real replica fenced at epoch ``at``, then given ``status``, answers ``request``: the refusal's
    text, or None when it accepts. The replica lives in ``tmp_path/name``."""
    events = EventLog(str(tmp_path / f"{name}.jsonl"), "n1")

    async def go() -> str | None:
        r = TabletReplica.create(0, str(tmp_path / name), "n1", events)
        await r.fence(at)
        r.status = status
        try:
            await request(r)
        except RpcError as e:
            return str(e)
        finally:
            await r.close()
        return None

    try:
        return asyncio.run(go())
    finally:
        events.close()
