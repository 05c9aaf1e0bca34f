"""Partitions on the local backend cut real links: a partitioned follower stops receiving entries."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from fencepost_reference.info import node_uuid

from harness.backends.iptables import why_unavailable
from harness.cluster_view import ClusterView
from harness.targets import busiest_leader, complete_grudge
from system.admin import call
from tests.harness.backends.local_cluster import local_cluster

pytestmark = pytest.mark.skipif(why_unavailable() is not None, reason=f"{why_unavailable()}")


async def head_offset(cluster: ClusterView, node: str) -> int:
    host, port = cluster.address(node)
    dump: dict[str, Any] = await call(host, port, "dump", {"tablet": 0}, to=await node_uuid(cluster, node))
    return int(dump["tablets"]["0"]["head"][1])


async def scenario(tmp_path: Path) -> None:
    async with local_cluster(tmp_path, client_timeout=5.0) as (cluster, client):
        leader = await busiest_leader(cluster)
        assert leader is not None
        follower = next(n for n in cluster.nodes() if n != leader)
        others = [n for n in cluster.nodes() if n != follower]
        assert (await client.put("k", 0)).type == "ok"
        await cluster.network.partition(complete_grudge([[follower], others]))
        cut_at = await head_offset(cluster, follower)
        for i in range(1, 21):
            assert (await client.put("k", i)).type == "ok"  # the other two still make a majority
        assert await head_offset(cluster, follower) == cut_at
        assert await head_offset(cluster, leader) >= cut_at + 20
        await cluster.network.heal()
        deadline = time.monotonic() + 30
        while await head_offset(cluster, follower) < await head_offset(cluster, leader):
            assert time.monotonic() < deadline, "the healed follower never caught up"
            await asyncio.sleep(0.2)


def test_partitioned_follower_falls_behind_and_catches_up_after_healing(tmp_path: Path) -> None:
    asyncio.run(scenario(tmp_path))
