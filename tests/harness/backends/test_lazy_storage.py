"""The local backend on lazy storage: mounted before nodes start, survives power losses, unmounted at teardown,
and reaped after a harness that was killed."""

from __future__ import annotations

import asyncio
import os
import random
import shutil
from pathlib import Path

import pytest
from fencepost_reference.info import node_uuid
from fencepost_reference.plugin import ReferencePlugin

from harness.backends.lazyfs.mount import fuse_mounts_under
from harness.backends.local import LocalBackend
from harness.backends.reaper import reap_run_dir
from harness.capabilities import POWER_LOSS
from harness.cluster import Cluster
from harness.config import TestConfig
from tests.harness.backends.local_cluster import local_cluster

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not os.path.exists("/dev/fuse") or shutil.which("fusermount3") is None,
                                 reason="needs /dev/fuse and fusermount3")]
LAZY = frozenset({POWER_LOSS})


def test_nodes_run_on_lazy_storage_and_survive_a_power_loss(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with local_cluster(tmp_path, 20.0, needs=LAZY) as (cluster, client):
            backend = cluster.backend
            assert isinstance(backend, LocalBackend)
            data_dirs = sorted(str(cluster.specs[n].data_dir) for n in cluster.nodes())
            assert sorted(fuse_mounts_under(str(tmp_path))) == data_dirs
            assert (tmp_path / "cluster" / "storage" / "n1" / "instance.json").exists()
            for i in range(20):
                assert (await client.put(f"k{i}", f"v{i}")).type == "ok"
            stats = backend.mounts["n1"].stats()
            assert stats["fsyncs"] > 0 and stats["writes"] > 0
            out = await cluster.disk.lose_unsynced(["n1", "n2"], True, random.Random(1))  # a majority loses power
            assert out["nodes"] == ["n1", "n2"] and set(out["lost"]["n1"]) >= {"dropped_writes", "torn"}
            await cluster.wait_ready(60.0)
            assert [(await client.get(f"k{i}")).value for i in range(20)] == [f"v{i}" for i in range(20)]
        assert fuse_mounts_under(str(tmp_path)) == []
        assert all(m.pid is None for m in backend.mounts.values())

    asyncio.run(scenario())


def test_a_wipe_gives_an_empty_disk_for_good(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with local_cluster(tmp_path, 20.0, needs=LAZY) as (cluster, _):
            old = await node_uuid(cluster, "n3")
            await cluster.wipe("n3")
            new = await _uuid_once_written(cluster, "n3", old)
            assert new is not None and new != old
            await cluster.disk.lose_unsynced(["n3"], False, random.Random(2))  # the old disk never comes back
            assert await _uuid_once_written(cluster, "n3", None) == new

    asyncio.run(scenario())


async def _uuid_once_written(cluster: Cluster, node: str, not_this: str | None) -> str | None:
    for _ in range(100):
        uuid = await node_uuid(cluster, node)
        if uuid not in (None, not_this):
            return uuid
        await asyncio.sleep(0.1)
    return None


def test_the_reaper_stops_and_unmounts_what_a_killed_harness_left(tmp_path: Path) -> None:
    backend = LocalBackend()
    cluster = Cluster(TestConfig(nodes=3, options={"tablets": 1}), ReferencePlugin(), backend)
    try:
        asyncio.run(cluster.start(tmp_path, LAZY))
        pids = backend.supervisor.all_pids()
        assert fuse_mounts_under(str(tmp_path))
        done = reap_run_dir(tmp_path)  # as `fencepost cluster down --store` does after a SIGKILL
        assert any("stopped" in line for line in done)
        assert fuse_mounts_under(str(tmp_path)) == []
        assert not any(Path(f"/proc/{p}").exists() and b"system." in Path(f"/proc/{p}/cmdline").read_bytes()
                       for p in pids)
    finally:
        asyncio.run(cluster.stop())
    assert fuse_mounts_under(str(tmp_path)) == []
