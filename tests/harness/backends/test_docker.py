"""The docker backend against a real engine: faults happen inside the containers, and nothing outlives a run."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fencepost_reference.info import cluster_info, node_uuid
from fencepost_reference.plugin import ReferencePlugin

from harness.backends import docker_objects as objs
from harness.backends.docker import DockerBackend
from harness.cluster import Cluster
from harness.config import TestConfig
from system.admin import call_sync
from tests.plugins.reference.cluster_kit import leaders

REASON = objs.engine_unavailable()
pytestmark = [pytest.mark.docker, pytest.mark.slow,
              pytest.mark.skipif(REASON is not None, reason=f"docker tests need a Docker engine: {REASON}")]


def docker_cluster(tmp_path: Path, **fields: object) -> Cluster:
    return Cluster(TestConfig(backend="docker", **fields), ReferencePlugin(), DockerBackend())  # type: ignore[arg-type]


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    """A ready 3-node reference cluster in containers; torn down (and its label reaped) whatever the test does."""
    c = docker_cluster(tmp_path, nodes=3, options={"tablets": 2})
    backend = c.backend
    assert isinstance(backend, DockerBackend)
    try:
        asyncio.run(c.start(tmp_path))
        yield c
    finally:
        asyncio.run(c.stop())
        objs.reap(backend.run_id)


def docker(c: Cluster) -> DockerBackend:
    assert isinstance(c.backend, DockerBackend)
    return c.backend


def reaches(c: Cluster, src: str, dst: str) -> bool:
    """Can ``src``'s container open a TCP connection to ``dst``'s port?"""
    host, port = c.address(dst)
    probe = f"import socket; socket.create_connection(({host!r}, {port}), 1).close()"
    code, _ = docker(c).containers[src].get_wrapped_container().exec_run(["python3", "-c", probe])
    return bool(code == 0)


def status(c: Cluster, name: str) -> str:
    return docker(c)._status(name)


def test_partition_is_iptables_inside_the_containers_and_heals(cluster: Cluster) -> None:
    assert reaches(cluster, "n2", "n1") and reaches(cluster, "n2", "n3")
    asyncio.run(cluster.network.partition({"n1": ["n2", "n3"], "n2": ["n1"], "n3": ["n1"]}))
    assert not reaches(cluster, "n2", "n1")
    assert not reaches(cluster, "n1", "n3")
    assert reaches(cluster, "n2", "n3"), "a partition must cut only the grudge's links"
    code, out = docker(cluster).containers["n1"].get_wrapped_container().exec_run(["iptables", "-S", "INPUT"])
    assert code == 0 and cluster.address("n2")[0] in out.decode()
    # the harness on the host still reaches every node: the rules cut links between processes only
    for n in cluster.nodes():
        host, port = cluster_info(cluster)["nodes"][n]
        assert call_sync(host, port, "hello", {}, timeout=3.0)
    asyncio.run(cluster.network.heal())
    assert reaches(cluster, "n2", "n1") and reaches(cluster, "n1", "n3")


def test_a_killed_node_comes_back_with_its_data_and_address_and_its_partition(cluster: Cluster) -> None:
    uuid = asyncio.run(node_uuid(cluster, "n1"))
    assert uuid
    asyncio.run(cluster.network.partition({"n1": ["n2"], "n2": ["n1"]}))
    asyncio.run(cluster.processes.kill("n1"))
    assert status(cluster, "n1") == "exited" and not cluster.processes.running("n1")
    asyncio.run(cluster.processes.start("n1"))
    assert status(cluster, "n1") == "running"
    assert asyncio.run(node_uuid(cluster, "n1")) == uuid
    assert not reaches(cluster, "n1", "n2"), "a restarted container must get the current partition again"
    asyncio.run(cluster.network.heal())
    assert reaches(cluster, "n1", "n2")


def test_pause_freezes_the_container_and_resume_thaws_it(cluster: Cluster) -> None:
    asyncio.run(cluster.processes.pause("n2"))
    assert status(cluster, "n2") == "paused"
    host, port = cluster.address("n2")
    with pytest.raises(Exception):  # noqa: B017 - a frozen node answers nothing: a timeout
        call_sync(host, port, "hello", {}, timeout=1.0)
    asyncio.run(cluster.processes.resume("n2"))
    assert status(cluster, "n2") == "running"
    assert call_sync(host, port, "hello", {}, timeout=3.0)


def test_a_pause_during_a_start_waits_for_it(cluster: Cluster) -> None:
    # The clean default campaign on Docker at seed 5 (0e92bb4) hung for good: a heal ran `docker exec` in op1
    # as a pause froze op1, and the engine blocked every later call on op1. A start probes its container with
    # execs too: on the old code this pause froze n2 between them, and the next probe failed (or hung).
    async def scenario() -> None:
        await cluster.processes.kill("n2")
        start = asyncio.create_task(cluster.processes.start("n2"))
        await asyncio.sleep(0.3)  # the start is waiting for n2 to listen
        await cluster.processes.pause("n2")
        assert start.done() and start.exception() is None
        assert status(cluster, "n2") == "paused"
        await cluster.processes.resume("n2")
        assert status(cluster, "n2") == "running" and reaches(cluster, "n1", "n2")

    asyncio.run(asyncio.wait_for(scenario(), 120))


def test_a_wipe_replaces_the_volume_and_the_node_starts_under_a_new_uuid(cluster: Cluster) -> None:
    backend = docker(cluster)
    old_uuid, old_volume = asyncio.run(node_uuid(cluster, "n3")), backend._volume_for("n3")
    address = cluster.address("n3")
    asyncio.run(cluster.wipe("n3"))
    assert asyncio.run(node_uuid(cluster, "n3")) not in (None, old_uuid)
    assert old_volume not in objs.leftovers(backend.run_id)["volumes"]
    assert backend._volume_for("n3") in objs.leftovers(backend.run_id)["volumes"]
    assert cluster.address("n3") == address


def test_a_start_with_extra_arguments_makes_the_container_anew_on_the_same_volume(cluster: Cluster) -> None:
    uuid = asyncio.run(node_uuid(cluster, "n2"))
    asyncio.run(cluster.processes.kill("n2"))
    asyncio.run(cluster.processes.start("n2", ["--bug", "gap-ack"]))
    assert status(cluster, "n2") == "running"
    cmd = docker(cluster).containers["n2"].get_wrapped_container().attrs["Config"]["Cmd"]
    assert cmd[-2:] == ["--bug", "gap-ack"]
    assert asyncio.run(node_uuid(cluster, "n2")) == uuid


def test_two_starts_of_one_stopped_node_at_once_make_one_container(cluster: Cluster) -> None:
    # Two overlapping faults may both start a node they stopped; with arguments, each start makes the
    # container anew, and two at once removed each other's or collided on the name.
    uuid = asyncio.run(node_uuid(cluster, "n2"))
    asyncio.run(cluster.processes.kill("n2"))

    async def both() -> None:
        await asyncio.gather(*(cluster.processes.start("n2", ["--bug", "gap-ack"]) for _ in range(2)))

    asyncio.run(both())
    assert status(cluster, "n2") == "running"
    assert asyncio.run(node_uuid(cluster, "n2")) == uuid
    host, port = cluster.address("n2")
    assert call_sync(host, port, "hello", {}, timeout=3.0)


def test_an_erase_waits_for_an_edit_of_the_same_node_and_leaves_no_unlabelled_volume(cluster: Cluster) -> None:
    # The clean default campaign on Docker at d7fe69f, seed 7: a corrupt fault's edit of n3 was cut in two by
    # a membership window's wipe of n3; the edit's helper container then mounted the erased volume's name,
    # which Docker made anew without the run's label, and the teardown left it behind.
    backend = docker(cluster)
    asyncio.run(cluster.processes.kill("n3"))

    def slow_change(folder: Path) -> dict[str, object]:
        time.sleep(1.5)  # the erase comes in meanwhile
        return {"files": sorted(p.name for p in folder.iterdir())}

    async def both() -> list[object]:
        edit = asyncio.create_task(backend.edit("n3", slow_change))
        await asyncio.sleep(0.3)
        return list(await asyncio.gather(edit, backend.erase("n3"), return_exceptions=True))

    edited, erased = asyncio.run(both())
    assert isinstance(edited, dict) and erased is None, (edited, erased)
    with objs.client() as c:
        named = sorted(v.name for v in c.volumes.list(filters={"name": f"fp-{backend.run_id}-n3-"}))
    assert named == [v for v in objs.leftovers(backend.run_id)["volumes"] if v.startswith(f"fp-{backend.run_id}-n3-")]
    with pytest.raises(ValueError, match="erased"):
        asyncio.run(backend.edit("n3", slow_change))
    asyncio.run(cluster.processes.start("n3"))


def test_an_erased_nodes_event_log_is_collected_whole(cluster: Cluster, tmp_path: Path) -> None:
    # A wipe removed the node's volume with its event log, which the white-box checkers read: the
    # default campaign's n1 at seed 2 (c7ffc97, local backend) had a log that began at its last wipe.
    backend = docker(cluster)
    uuid = asyncio.run(node_uuid(cluster, "n3"))
    asyncio.run(cluster.processes.kill("n3"))
    asyncio.run(backend.erase("n3"))
    out = tmp_path / "collected-after-erase"
    asyncio.run(backend.collect(out))
    events = [json.loads(line) for line in (out / "nodes" / "n3" / "events.jsonl").read_text().splitlines()]
    assert any(e["event"] == "node_started" and e["uuid"] == uuid for e in events), events[:3]


def test_collect_copies_logs_events_and_dumps(cluster: Cluster, tmp_path: Path) -> None:
    out = tmp_path / "collected"
    asyncio.run(cluster.backend.collect(out))
    asyncio.run(cluster.system.collect(cluster, out))  # type: ignore[attr-defined]
    for n in cluster.nodes():
        assert (out / "nodes" / n / f"{n}.log").stat().st_size > 0
        assert (out / "nodes" / n / "events.jsonl").stat().st_size > 0
        assert "tablets" in (out / "nodes" / n / "dump.json").read_text()
    assert (out / "nodes" / "op1" / "events.jsonl").exists()


def test_teardown_removes_every_container_network_and_volume(tmp_path: Path) -> None:
    c = docker_cluster(tmp_path, nodes=3, options={"tablets": 1})
    run_id = docker(c).run_id
    try:
        asyncio.run(c.start(tmp_path))
        made = objs.leftovers(run_id)
        # master, n1-n3, op1; one data volume each, and the metadata store's shared volume
        assert len(made["containers"]) == 5 and len(made["networks"]) == 1 and len(made["volumes"]) == 6, made
    finally:
        asyncio.run(c.stop())
    assert objs.leftovers(run_id) == {"containers": [], "networks": [], "volumes": []}
    asyncio.run(c.stop())  # safe to call twice


def test_teardown_during_setup_leaves_nothing(tmp_path: Path) -> None:
    c = docker_cluster(tmp_path, nodes=3, options={"tablets": 1})
    b = docker(c)

    async def interrupted() -> None:
        task = asyncio.create_task(c.start(tmp_path))
        for _ in range(200):  # until the first container exists, then cancel as Ctrl-C would
            if b.containers:
                break
            await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await c.stop()

    try:
        asyncio.run(interrupted())
    finally:
        leftovers = objs.leftovers(b.run_id)
        objs.reap(b.run_id)
    assert leftovers == {"containers": [], "networks": [], "volumes": []}


def test_an_etcd_metadata_store_runs_in_its_own_container(tmp_path: Path) -> None:
    c = docker_cluster(tmp_path, nodes=3, options={"tablets": 2}, extra={"metadata": "etcd"})
    try:
        asyncio.run(c.start(tmp_path))
        assert c.specs["etcd"].role == "service" and status(c, "etcd") == "running"
        assert any(a.startswith("etcd://") for a in c.specs["op1"].argv)
        assert len(asyncio.run(leaders(c))) == 2
    finally:
        asyncio.run(c.stop())
    assert objs.leftovers(docker(c).run_id) == {"containers": [], "networks": [], "volumes": []}
