"""Editing a stopped container's data directory (the disk capability's ``edit``), through the reference
system's corrupt fault inside real containers: each kind of damage lands, and is detected by the node it hits."""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fencepost_reference.faults.corrupt import damage
from fencepost_reference.faults.file_damage import WAL_KINDS
from fencepost_reference.info import cluster_info
from fencepost_reference.plugin import ReferencePlugin

from harness.backends import docker_objects as objs
from harness.backends.docker import DockerBackend
from harness.cluster import Cluster
from harness.config import TestConfig
from system.admin import call_sync
from system.client import Client
from system.node import EXIT_DISK_LOSS

REASON = objs.engine_unavailable()
pytestmark = [pytest.mark.docker, pytest.mark.slow,
              pytest.mark.skipif(REASON is not None, reason=f"docker tests need a Docker engine: {REASON}")]


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    """A 3-node docker cluster holding a few writes; torn down (and its label reaped) whatever the test does."""
    backend = DockerBackend()
    test = TestConfig(nodes=3, options={"tablets": 2}, backend="docker", nemesis=["corrupt"])
    c = Cluster(test, ReferencePlugin(), backend)
    try:
        asyncio.run(c.start(tmp_path))
        asyncio.run(write_some(c))
        yield c
    finally:
        asyncio.run(c.stop())
        objs.reap(backend.run_id)


async def write_some(c: Cluster) -> None:
    client = Client(cluster_info(c)["operators"], timeout=5.0)
    try:
        for i in range(20):
            assert (await client.put(f"k{i}", i)).type == "ok"
    finally:
        await client.close()
    await asyncio.sleep(1.0)  # followers hold the entries too


def hello(c: Cluster, node: str) -> dict[str, object]:
    host, port = c.address(node)
    answer: dict[str, object] = call_sync(host, port, "hello", {}, timeout=3.0)
    return answer


def test_lost_metadata_makes_the_node_exit_and_reformat_gives_it_a_new_uuid(cluster: Cluster) -> None:
    done = asyncio.run(damage(cluster, "n2", "delete-metadata", random.Random(1)))
    assert done["file"].endswith("/state.json")  # deleted inside the volume, though the archive API cannot delete
    old = done["old_uuids"]["n2"]
    assert done["exit"] == EXIT_DISK_LOSS and done["reformatted"] == ["n2"] and old
    assert done["new_uuids"]["n2"] not in (None, old) and hello(cluster, "n2")["uuid"] == done["new_uuids"]["n2"]
    backend = cluster.backend
    assert isinstance(backend, DockerBackend) and backend.layout is not None
    asyncio.run(backend.collect(Path(str(backend.layout.dir))))
    log = backend.layout.log_path("n2").read_text()
    assert "disk loss" in log and "consensus metadata missing" in log


@pytest.mark.parametrize("kind", WAL_KINDS)
def test_wal_damage_marks_the_tablet_damaged(cluster: Cluster, kind: str) -> None:
    done = asyncio.run(damage(cluster, "n2", kind, random.Random(1)))
    tablet = int(done["file"].split("/")[-2])
    deadline = time.monotonic() + 30
    while True:  # found at start; the operator then tombstones the replica and copies it again
        raw = asyncio.run(cluster.disk.read_file("n2", "events.jsonl")) or b""
        events = [json.loads(line) for line in raw.decode().splitlines() if line.strip()]
        if any(e["event"] == "tablet_damaged" and e.get("tablet") == tablet for e in events):
            break
        assert time.monotonic() < deadline, f"tablet {tablet} was never found damaged"
        time.sleep(0.3)
