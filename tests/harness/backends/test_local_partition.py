"""Partitions on the local backend cut real links: a partitioned follower stops receiving entries."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from harness.backends.iptables import why_unavailable
from harness.backends.local import LocalBackend
from nemesis.targets import complete_grudge
from system.admin import call
from tests.harness.backends.local_cluster import local_cluster

pytestmark = pytest.mark.skipif(why_unavailable() is not None, reason=f"{why_unavailable()}")


async def head_offset(backend: LocalBackend, node: str) -> int:
    assert backend.cluster is not None
    host, port = backend.cluster.node_addrs[node]
    dump: dict[str, Any] = await call(host, port, "dump", {"tablet": 0}, to=backend.cluster.node_uuid(node))
    return int(dump["tablets"]["0"]["head"][1])


async def scenario(tmp_path: Path) -> None:
    async with local_cluster(tmp_path, client_timeout=5.0) as (backend, client):
        leader = (await backend.leaders())[0]
        follower = next(n for n in backend.nodes() if n != leader)
        others = [n for n in backend.nodes() if n != follower]
        assert (await client.put("k", 0)).type == "ok"
        await backend.partition(complete_grudge([[follower], others]))
        cut_at = await head_offset(backend, follower)
        for i in range(1, 21):
            assert (await client.put("k", i)).type == "ok"  # the other two still make a majority
        assert await head_offset(backend, follower) == cut_at
        assert await head_offset(backend, leader) >= cut_at + 20
        await backend.heal_network()
        deadline = time.monotonic() + 30
        while await head_offset(backend, follower) < await head_offset(backend, leader):
            assert time.monotonic() < deadline, "the healed follower never caught up"
            await asyncio.sleep(0.2)


def test_partitioned_follower_falls_behind_and_catches_up_after_healing(tmp_path: Path) -> None:
    asyncio.run(scenario(tmp_path))
