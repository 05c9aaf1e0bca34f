"""``partition leader-deposed`` on a real reference cluster: the cut holds until another leader is named."""

from __future__ import annotations

import asyncio
import random
import time
from pathlib import Path

import pytest

from harness.backends.iptables import why_unavailable
from harness.protocols import FaultSpec
from harness.targets import busiest_leader
from nemesis.partition import DEPOSED, DEPOSED_HOLD_S, package
from tests.harness.backends.local_cluster import local_cluster

pytestmark = pytest.mark.skipif(why_unavailable() is not None, reason=f"{why_unavailable()}")


async def scenario(tmp_path: Path) -> None:
    async with local_cluster(tmp_path, client_timeout=3.0, options={"tablets": 2}) as (cluster, client):
        leader = await busiest_leader(cluster)
        assert leader is not None
        nemesis = package()
        began = time.monotonic()
        done = await nemesis.start(cluster, FaultSpec("partition", DEPOSED), random.Random(1))
        took = time.monotonic() - began
        try:
            assert done["lone"] == leader
            assert sorted(done["grudge"][leader]) == sorted(n for n in done["grudge"] if n != leader)
            assert done["deposed_after_s"] is not None, done
            assert leader not in await cluster.primaries()  # still cut off, and replaced
            assert took >= done["deposed_after_s"] + DEPOSED_HOLD_S
        finally:
            await nemesis.stop(cluster)
        assert (await client.put("k", 1)).type == "ok"


def test_the_cut_holds_until_the_leader_is_replaced(tmp_path: Path) -> None:
    asyncio.run(scenario(tmp_path))
