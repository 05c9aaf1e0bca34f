"""The lose-unsynced fault: found by its dashed name, asks for lazy storage, and on a real local cluster
cuts the power of the whole rack without losing an acknowledged write of the correct system."""

from __future__ import annotations

import asyncio
import os
import random
import shutil
from pathlib import Path

import pytest
from fencepost_reference.info import cluster_info

from harness.backends.lazyfs.mount import fuse_mounts_under
from harness.capabilities import POWER_LOSS, PROCESSES, CapabilityMissing
from harness.cluster_view import ClusterView
from harness.protocols import FaultSpec, Nemesis
from harness.registry import load_nemesis, needs_of, nemesis_names
from nemesis.lose_unsynced import TARGETS
from system.client import Client
from tests.harness.backends.local_cluster import local_cluster

HAVE_FUSE = os.path.exists("/dev/fuse") and shutil.which("fusermount3") is not None


def test_the_package_is_found_by_its_dashed_name_and_needs_power_loss() -> None:
    assert "lose-unsynced" in nemesis_names() and "lose_unsynced" not in nemesis_names()
    pkg = load_nemesis("lose-unsynced")
    assert isinstance(pkg, Nemesis) and pkg.name == "lose-unsynced"
    assert tuple(pkg.targets()) == TARGETS
    assert needs_of([pkg, load_nemesis("kill")]) == {POWER_LOSS, PROCESSES}


async def _puts_then_gets(cluster: ClusterView, n: int, before: bool) -> list[str | None]:
    client = Client(cluster_info(cluster)["operators"], timeout=20.0)
    try:
        if before:
            for i in range(n):
                assert (await client.put(f"k{i}", f"v{i}")).type == "ok"
            return []
        return [(await client.get(f"k{i}")).value for i in range(n)]
    finally:
        await client.close()


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_FUSE, reason="needs /dev/fuse and fusermount3")
def test_rack_power_loss_on_a_real_cluster(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with local_cluster(tmp_path, 20.0, options={"tablets": 2}, needs=frozenset({POWER_LOSS})) as (cluster, _):
            assert len(fuse_mounts_under(str(tmp_path))) == 3
            await _puts_then_gets(cluster, 10, before=True)
            pkg = load_nemesis("lose-unsynced")
            desc = await pkg.start(cluster, FaultSpec("lose-unsynced", "all"), random.Random(5))
            assert desc["nodes"] == ["n1", "n2", "n3"] and set(desc["lost"]) == {"n1", "n2", "n3"}
            assert await pkg.stop(cluster) == {}
            await cluster.wait_ready(60.0)
            assert await _puts_then_gets(cluster, 10, before=False) == [f"v{i}" for i in range(10)]
        assert fuse_mounts_under(str(tmp_path)) == []

    asyncio.run(scenario())


@pytest.mark.slow
def test_plain_storage_refuses_the_fault(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with local_cluster(tmp_path, 5.0) as (cluster, _):
            with pytest.raises(CapabilityMissing, match="lazy storage"):
                await cluster.disk.lose_unsynced(["n1"], False, random.Random(1))

    asyncio.run(scenario())
