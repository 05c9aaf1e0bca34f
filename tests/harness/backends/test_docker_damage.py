"""The corrupt fault's file damage inside real containers: each kind is detected by the node it hits."""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.backends import docker_objects as objs
from harness.backends.docker import PORT, DockerBackend
from harness.backends.file_damage import WAL_KINDS
from harness.config import TestConfig
from system.admin import call_sync
from system.client import Client
from system.node import EXIT_DISK_LOSS

REASON = objs.engine_unavailable()
pytestmark = [pytest.mark.docker, pytest.mark.slow,
              pytest.mark.skipif(REASON is not None, reason=f"docker tests need a Docker engine: {REASON}")]


@pytest.fixture
def backend(tmp_path: Path) -> Iterator[DockerBackend]:
    """A 3-node docker cluster holding a few writes; torn down (and its label reaped) whatever the test does."""
    b = DockerBackend()
    try:
        asyncio.run(b.setup(TestConfig(nodes=3, tablets=2, backend="docker", nemesis=["corrupt"]), tmp_path))
        asyncio.run(write_some(b))
        yield b
    finally:
        asyncio.run(b.teardown())
        objs.reap(b.run_id)


async def write_some(b: DockerBackend) -> None:
    client = Client(b.cluster_info()["operators"], timeout=5.0)
    try:
        for i in range(20):
            assert (await client.put(f"k{i}", i)).type == "ok"
    finally:
        await client.close()
    await asyncio.sleep(1.0)  # followers hold the entries too


def hello(b: DockerBackend, node: str) -> dict[str, object]:
    answer: dict[str, object] = call_sync(b.specs[node].ip, PORT, "hello", {}, timeout=3.0)
    return answer


def test_lost_metadata_makes_the_node_exit_and_it_is_wiped_into_a_new_uuid(backend: DockerBackend) -> None:
    old = backend.uuids["n2"]
    done = asyncio.run(backend.damage_wal("n2", "delete-metadata", random.Random(1)))
    assert done["file"].endswith("/state.json")
    assert done["exit"] == EXIT_DISK_LOSS and done["reformatted"] == ["n2"] and done["old_uuids"] == {"n2": old}
    assert done["new_uuids"]["n2"] not in (None, old) and hello(backend, "n2")["uuid"] == done["new_uuids"]["n2"]
    log = (backend._log_path("n2")).read_text()
    assert "disk loss" in log and "consensus metadata missing" in log


@pytest.mark.parametrize("kind", WAL_KINDS)
def test_wal_damage_marks_the_tablet_damaged(backend: DockerBackend, kind: str) -> None:
    done = asyncio.run(backend.damage_wal("n2", kind, random.Random(1)))
    tablet = int(done["file"].split("/")[-2])
    deadline = time.monotonic() + 30
    while True:  # found at start; the operator then tombstones the replica and copies it again
        raw = objs.read_file(backend.containers["n2"].get_wrapped_container(), "/data/events.jsonl") or b""
        events = [json.loads(line) for line in raw.decode().splitlines() if line.strip()]
        if any(e["event"] == "tablet_damaged" and e.get("tablet") == tablet for e in events):
            break
        assert time.monotonic() < deadline, f"tablet {tablet} was never found damaged"
        time.sleep(0.3)
