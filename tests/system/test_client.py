"""The reference client: a home node first, redirects from there, and a leader that times out is dropped.

A leader cut off from its followers and the operator, but not from clients, accepts writes it can
never commit. The client must give up on it after a timeout and ask the operator, which has elected
another leader by then; otherwise every later operation goes back to the deposed leader.
"""

from __future__ import annotations

import asyncio
import random
import time
from pathlib import Path

import pytest
from fencepost_reference.info import cluster_info, operators

from harness.backends.iptables import why_unavailable
from nemesis.partition import grudge_for
from system.client import Client
from tests.harness.backends.local_cluster import local_cluster
from tests.plugins.reference.cluster_kit import leaders

pytestmark = pytest.mark.skipif(why_unavailable() is not None, reason=f"{why_unavailable()}")


async def scenario(tmp_path: Path) -> None:
    async with local_cluster(tmp_path, client_timeout=2.0) as (backend, client):
        old = (await leaders(backend))[0]
        assert (await client.put("k", 0)).type == "ok"
        assert client.leaders[0] == old
        follower = next(n for n in backend.nodes() if n != old)
        homed = Client(cluster_info(backend)["operators"], timeout=2.0, home=follower)
        try:
            assert await homed.refresh() and homed.leaders == {0: follower}  # the home, whatever the operator says
            assert (await homed.put("h", 1)).type == "ok"
            assert homed.leaders[0] == old  # the follower's refusal named the leader
            assert await homed.refresh() and homed.leaders == {0: old}  # later tables are the operator's
        finally:
            await homed.close()
        await backend.network.partition(grudge_for("leader-alone", backend.nodes(), random.Random(0), leader=old,
                                           operators=operators(backend)))
        hung = await client.put("k", 1)
        assert hung.type == "info", hung
        assert 0 not in client.leaders, "the leader that timed out is still cached"
        deadline = time.monotonic() + 30
        while (await leaders(backend)).get(0) in (None, old):
            assert time.monotonic() < deadline, "the operator never elected another leader"
            await asyncio.sleep(0.2)
        # Still partitioned: the next write asks the operator and reaches the new leader.
        done = await client.put("k", 2)
        assert done.type == "ok", done
        assert client.leaders[0] != old


def test_a_timed_out_leader_is_dropped_and_the_next_write_reaches_the_new_one(tmp_path: Path) -> None:
    asyncio.run(scenario(tmp_path))
