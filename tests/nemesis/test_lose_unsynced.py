"""The lose-unsynced fault: found by its dashed name, asks for lazy storage, and on a real local cluster
cuts the power of the whole rack without losing an acknowledged write of the correct system."""

from __future__ import annotations

import asyncio
import os
import random
import shutil
from pathlib import Path

import pytest

from harness.backends.local import LocalBackend
from harness.config import TestConfig
from harness.protocols import FaultSpec, Nemesis
from nemesis.lose_unsynced import TARGETS
from nemesis.registry import available, load, needs
from system.client import Client
from system.lazy_storage import fuse_mounts_under

HAVE_FUSE = os.path.exists("/dev/fuse") and shutil.which("fusermount3") is not None


def test_the_package_is_found_by_its_dashed_name_and_asks_for_lazy_storage() -> None:
    assert "lose-unsynced" in available() and "lose_unsynced" not in available()
    pkg = load("lose-unsynced")
    assert isinstance(pkg, Nemesis) and pkg.name == "lose-unsynced"
    assert tuple(pkg.targets()) == TARGETS
    assert needs(["lose-unsynced", "kill"]) == {"lazyfs"}


async def _puts_then_gets(backend: LocalBackend, n: int, before: bool) -> list[str | None]:
    client = Client(backend.cluster_info()["operators"], timeout=20.0)
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
        backend = LocalBackend()
        try:
            await backend.setup(TestConfig(nemesis=["lose-unsynced"], tablets=2), tmp_path)
            assert backend.cluster is not None and backend.cluster.storage == "lazy"
            assert len(fuse_mounts_under(str(tmp_path))) == 3
            await _puts_then_gets(backend, 10, before=True)
            pkg = load("lose-unsynced")
            desc = await pkg.start(backend, FaultSpec("lose-unsynced", "all"), random.Random(5))
            assert desc["nodes"] == ["n1", "n2", "n3"] and set(desc["lost"]) == {"n1", "n2", "n3"}
            assert await pkg.stop(backend) == {}
            await asyncio.to_thread(backend.cluster.wait_ready, 60.0)
            assert await _puts_then_gets(backend, 10, before=False) == [f"v{i}" for i in range(10)]
        finally:
            await backend.teardown()
        assert fuse_mounts_under(str(tmp_path)) == []

    asyncio.run(scenario())


@pytest.mark.slow
def test_plain_storage_refuses_the_fault(tmp_path: Path) -> None:
    async def scenario() -> None:
        backend = LocalBackend()
        try:
            await backend.setup(TestConfig(nemesis=["kill"], tablets=1), tmp_path)
            with pytest.raises(RuntimeError, match="lazy storage"):
                await backend.lose_unsynced(["n1"], False, random.Random(1))
        finally:
            await backend.teardown()

    asyncio.run(scenario())
