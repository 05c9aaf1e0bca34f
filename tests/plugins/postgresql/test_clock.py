"""libfaketime reaches PostgreSQL: the clock capability moves what the server reads as the time."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fencepost_postgresql.sql import query

from tests.plugins.postgresql.kit import WHY_NOT, postgres

pytestmark = [pytest.mark.slow, pytest.mark.skipif(WHY_NOT is not None, reason=f"PostgreSQL: {WHY_NOT}")]


def test_a_clock_offset_moves_now_on_the_server(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with postgres(tmp_path, nodes=2, nemesis=("clock",)) as cluster:
            async def skew(node: str) -> float:
                (now,), = await query(cluster.address(node), "SELECT clock_timestamp()")
                return (now - datetime.now(UTC)).total_seconds()

            assert abs(await skew("n1")) < 5
            await cluster.clock.set_offset("n1", 3600.0)
            await asyncio.sleep(0.2)
            assert 3590 < await skew("n1") < 3610  # new backends and running ones read the moved clock
            assert abs(await skew("n2")) < 5  # the standby's clock is its own
            await cluster.clock.set_offset("n1", -600.0)
            assert -610 < await skew("n1") < -590

    asyncio.run(scenario())
