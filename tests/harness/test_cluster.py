"""Cluster: the seam between faults and a backend, on a real local reference cluster."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import pytest

from harness.backends.lazyfs.mount import fuse_mounts_under
from harness.backends.local import LocalBackend
from harness.polling import poll_until
from tests.plugins.reference.cluster_kit import node_events, reference_cluster, whole


@pytest.mark.slow
def test_two_wipes_of_one_node_at_once_run_one_after_the_other(tmp_path: Path) -> None:
    # At c273c74 (no-uuid-check, seed 2 of the default campaign) the membership fault's re-add wiped n1
    # while the wipe fault wiped it too. The second erase unmounted and deleted the lazy disk the first
    # had just mounted for the restarted node, and the run ended in an error reading n1's event log.
    async def scenario() -> None:
        async with reference_cluster(tmp_path, nodes=4, tablets=1, nemesis=["wipe", "lose-unsynced"]) as cluster:
            await whole(cluster, set(), 60)
            backend = cluster.backend
            assert isinstance(backend, LocalBackend)
            mount = backend.mounts["n4"]
            before = mount.pid

            async def remounted() -> bool:
                return mount.pid not in (None, before)

            first = asyncio.create_task(cluster.wipe("n4"))
            # The second wipe begins once the first has mounted n4's new, empty disk.
            assert await poll_until(remounted, 30, 0.005), "the first wipe never mounted a new disk"
            await asyncio.gather(first, cluster.wipe("n4"))
            assert Path(mount.backing).is_dir(), "a wipe deleted the disk the node now runs on"
            assert mount.mount in fuse_mounts_under(mount.mount) and mount.pid is not None
            assert cluster.processes.running("n4")

            async def identities() -> set[str]:
                with contextlib.suppress(FileNotFoundError):
                    return {e["uuid"] for e in node_events(cluster, "n4") if e["event"] == "node_started"}
                return set()

            assert len(await poll_until(identities, 20) or ()) == 1, "one identity since the node's last wipe"

    asyncio.run(scenario())


def test_a_system_with_power_loss_but_no_disk_faults_can_lose_power_and_only_that() -> None:
    # PostgreSQL offers power loss but not disk faults (a wiped primary loses data by design): its power-loss
    # windows failed with "does not offer the disk capability", since lose_unsynced is reached through the disk.
    from harness import capabilities as caps
    from harness.backends.local import lazyfs_unavailable
    from harness.capabilities import CapabilityMissing
    from harness.cluster import Cluster
    from harness.config import TestConfig
    from harness.testing.fake import FakeSystem

    if lazyfs_unavailable() is not None:
        pytest.skip(f"power loss: {lazyfs_unavailable()}")

    class PowerOnly(FakeSystem):
        capabilities = frozenset({caps.PROCESSES, caps.POWER_LOSS})

    backend = LocalBackend()
    assert Cluster(TestConfig(), PowerOnly(), backend).disk is backend.disk
    with pytest.raises(CapabilityMissing, match="disk"):
        _ = Cluster(TestConfig(), FakeSystem(), backend).disk  # neither: the disk capability is what is missing
    with pytest.raises(CapabilityMissing, match="disk"):
        asyncio.run(Cluster(TestConfig(), PowerOnly(), backend).wipe("n1"))  # erasing still needs disk
