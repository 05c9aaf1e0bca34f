"""The docker backend against a real engine: faults happen inside the containers, and nothing outlives a run."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.backends import docker_objects as objs
from harness.backends.docker import PORT, DockerBackend
from harness.config import TestConfig
from system.admin import call_sync

REASON = objs.engine_unavailable()
pytestmark = [pytest.mark.docker, pytest.mark.slow,
              pytest.mark.skipif(REASON is not None, reason=f"docker tests need a Docker engine: {REASON}")]


@pytest.fixture
def backend(tmp_path: Path) -> Iterator[DockerBackend]:
    """A 3-node docker cluster, set up; torn down (and its label reaped) whatever the test does."""
    b = DockerBackend()
    try:
        asyncio.run(b.setup(TestConfig(nodes=3, tablets=2, backend="docker"), tmp_path))
        yield b
    finally:
        asyncio.run(b.teardown())
        objs.reap(b.run_id)


def reaches(b: DockerBackend, src: str, dst: str) -> bool:
    """Can ``src``'s container open a TCP connection to ``dst``'s node port?"""
    probe = f"import socket; socket.create_connection(({b.specs[dst].ip!r}, {PORT}), 1).close()"
    code, _ = b.containers[src].get_wrapped_container().exec_run(["python3", "-c", probe])
    return bool(code == 0)


def status(b: DockerBackend, name: str) -> str:
    return b._status(name)


def test_partition_is_iptables_inside_the_containers_and_heals(backend: DockerBackend) -> None:
    assert reaches(backend, "n2", "n1") and reaches(backend, "n2", "n3")
    asyncio.run(backend.partition({"n1": ["n2", "n3"], "n2": ["n1"], "n3": ["n1"]}))
    assert not reaches(backend, "n2", "n1")
    assert not reaches(backend, "n1", "n3")
    assert reaches(backend, "n2", "n3"), "a partition must cut only the grudge's links"
    code, out = backend.containers["n1"].get_wrapped_container().exec_run(["iptables", "-S", "INPUT"])
    assert code == 0 and backend.specs["n2"].ip in out.decode()
    # the harness on the host still reaches every node: the rules cut node-to-node links only
    for n in backend.nodes():
        host, port = backend.cluster_info()["nodes"][n]
        assert call_sync(host, port, "hello", {}, timeout=3.0)
    asyncio.run(backend.heal_network())
    assert reaches(backend, "n2", "n1") and reaches(backend, "n1", "n3")


def test_a_killed_node_comes_back_with_its_data_and_address_and_its_partition(backend: DockerBackend) -> None:
    uuid = backend.uuids["n1"]
    asyncio.run(backend.partition({"n1": ["n2"], "n2": ["n1"]}))
    asyncio.run(backend.kill("n1"))
    assert status(backend, "n1") == "exited"
    asyncio.run(backend.start("n1"))
    assert status(backend, "n1") == "running"
    assert backend._read_uuid("n1") == uuid
    assert not reaches(backend, "n1", "n2"), "a restarted container must get the current partition again"
    asyncio.run(backend.heal_network())
    assert reaches(backend, "n1", "n2")


def test_pause_freezes_the_container_and_resume_thaws_it(backend: DockerBackend) -> None:
    asyncio.run(backend.pause("n2"))
    assert status(backend, "n2") == "paused"
    host, port = backend.cluster_info()["nodes"]["n2"]
    with pytest.raises(Exception):  # noqa: B017 - a frozen node answers nothing: a timeout
        call_sync(host, port, "hello", {}, timeout=1.0)
    asyncio.run(backend.resume("n2"))
    assert status(backend, "n2") == "running"
    assert call_sync(host, port, "hello", {}, timeout=3.0)


def test_wipe_replaces_the_volume_and_the_node_starts_under_a_new_uuid(backend: DockerBackend) -> None:
    old_uuid, old_volume = backend.uuids["n3"], backend._volume_for("n3")
    asyncio.run(backend.wipe("n3"))
    assert backend.uuids["n3"] not in (None, old_uuid)
    assert old_volume not in objs.leftovers(backend.run_id)["volumes"]
    assert backend._volume_for("n3") in objs.leftovers(backend.run_id)["volumes"]
    assert backend.cluster_info()["nodes"]["n3"][0] == backend.specs["n3"].ip


def test_collect_copies_logs_events_and_dumps(backend: DockerBackend, tmp_path: Path) -> None:
    asyncio.run(backend.collect(tmp_path))
    for n in backend.nodes():
        assert (tmp_path / "nodes" / n / f"{n}.log").stat().st_size > 0
        assert (tmp_path / "nodes" / n / "events.jsonl").stat().st_size > 0
        dump = json.loads((tmp_path / "nodes" / n / "dump.json").read_text())
        assert "tablets" in dump, dump
    assert (tmp_path / "nodes" / "op1" / "events.jsonl").exists()


def test_teardown_removes_every_container_network_and_volume(tmp_path: Path) -> None:
    b = DockerBackend()
    try:
        asyncio.run(b.setup(TestConfig(nodes=3, tablets=1, backend="docker"), tmp_path))
        made = objs.leftovers(b.run_id)
        assert len(made["containers"]) == 5 and len(made["networks"]) == 1 and len(made["volumes"]) == 4, made
    finally:
        asyncio.run(b.teardown())
    assert objs.leftovers(b.run_id) == {"containers": [], "networks": [], "volumes": []}
    asyncio.run(b.teardown())  # safe to call twice


def test_teardown_during_setup_leaves_nothing(tmp_path: Path) -> None:
    b = DockerBackend()

    async def interrupted() -> None:
        task = asyncio.create_task(b.setup(TestConfig(nodes=3, tablets=1, backend="docker"), tmp_path))
        for _ in range(200):  # until the first container exists, then cancel as Ctrl-C would
            if b.containers:
                break
            await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await b.teardown()

    try:
        asyncio.run(interrupted())
    finally:
        leftovers = objs.leftovers(b.run_id)
        objs.reap(b.run_id)
    assert leftovers == {"containers": [], "networks": [], "volumes": []}


def test_an_etcd_metadata_store_runs_in_its_own_container(tmp_path: Path) -> None:
    b = DockerBackend()
    try:
        asyncio.run(b.setup(TestConfig(nodes=3, tablets=2, backend="docker", extra={"metadata": "etcd"}), tmp_path))
        assert b.specs["etcd"].kind == "etcd" and status(b, "etcd") == "running"
        assert any(a.startswith("etcd://") for a in b.specs["op1"].argv)
        assert len(asyncio.run(b.leaders())) == 2
    finally:
        asyncio.run(b.teardown())
    assert objs.leftovers(b.run_id) == {"containers": [], "networks": [], "volumes": []}
