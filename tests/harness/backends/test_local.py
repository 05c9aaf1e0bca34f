"""The local backend's process control against real processes."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from fencepost_reference.info import node_uuid

from harness.backends.local import LocalBackend
from tests.harness.backends.local_cluster import local_cluster
from tests.plugins.reference.cluster_kit import reference_cluster

pytestmark = pytest.mark.slow


def test_two_starts_of_one_stopped_node_at_once_launch_it_once(tmp_path: Path) -> None:
    # Two faults' windows that overlap may both start a node they stopped (the clean default campaign at
    # seed 5: a membership re-add and a corrupt restart of n3): both launched it, and the second process
    # died unable to bind the address, a traceback the log-pattern checker reported.
    async def scenario() -> None:
        async with local_cluster(tmp_path, client_timeout=5.0) as (cluster, _):
            backend = cluster.backend
            assert isinstance(backend, LocalBackend)
            uuid = await node_uuid(cluster, "n1")
            before = set(backend.supervisor.started())
            await cluster.processes.kill("n1")
            await asyncio.gather(cluster.processes.start("n1"), cluster.processes.start("n1"))
            launched = [p for p, cmd in backend.supervisor.started().items() if p not in before]
            assert len(launched) == 1, launched
            await asyncio.sleep(1.0)
            assert backend.running("n1") and not backend.supervisor.exited()
            assert await node_uuid(cluster, "n1") == uuid

    asyncio.run(scenario())


def test_teardown_brings_the_collected_logs_up_to_date(tmp_path: Path) -> None:
    # A node that crashed on SIGTERM at teardown (the mutant `replica.py:IsNot_Is:15`: every node died in its
    # shutdown with an AttributeError) left its traceback only in the live log: the copy the checkers read
    # was taken before the processes stopped, and the log-pattern checker saw nothing.
    # A node of the correct reference system prints nothing when it stops, so the test writes the late line
    # into n1's live log (its stdout and stderr) itself, after the collection and before the teardown.
    late = "Traceback (most recent call last):  <- written after the collection\n"

    async def scenario() -> Path:
        async with local_cluster(tmp_path / "cluster", client_timeout=5.0) as (cluster, _):
            backend = cluster.backend
            assert isinstance(backend, LocalBackend) and backend.layout is not None
            await backend.collect(tmp_path / "run")
            live = backend.layout.log_path("n1")
            with live.open("a") as fh:
                fh.write(late)
        return live

    live = asyncio.run(scenario())
    copy = (tmp_path / "run" / "nodes" / "n1" / live.name).read_text()
    assert copy.endswith(late) and copy == live.read_text()


def test_an_erased_nodes_event_log_is_collected_whole(tmp_path: Path) -> None:
    # A wipe erased the node's event log with its data: at seed 2 of the default campaign (c7ffc97) n1's
    # log began at its last wipe, 90 s in, and the topology-guards checker could not see the copy a
    # cancelled migration had sent it at 48 s.
    async def scenario() -> None:
        async with local_cluster(tmp_path / "cluster", client_timeout=5.0) as (cluster, _):
            backend = cluster.backend
            assert isinstance(backend, LocalBackend)
            uuid = await node_uuid(cluster, "n1")
            await cluster.processes.kill("n1")
            await backend.erase("n1")
            assert await backend.read_file("n1", "events.jsonl") is None  # the disk is new and empty
            await backend.collect(tmp_path / "run")
        events = [json.loads(line) for line in (tmp_path / "run" / "nodes" / "n1" / "events.jsonl").read_text()
                  .splitlines()]
        assert any(e["event"] == "node_started" and e["uuid"] == uuid for e in events), events[:3]

    asyncio.run(scenario())


def test_a_nodes_event_log_is_collected_when_its_lazy_filesystem_is_gone(tmp_path: Path) -> None:
    # At c273c74 (no-uuid-check, seed 2) n1's lazy filesystem was gone when the run ended (two wipes of it
    # at once): collecting its event log through the mount failed with ENOTCONN, and the matrix stopped.
    # The log is written straight through to the backing directory, which is still there.
    async def scenario() -> None:
        async with reference_cluster(tmp_path / "cluster", nodes=3, tablets=1, nemesis=["lose-unsynced"]) as cluster:
            backend = cluster.backend
            assert isinstance(backend, LocalBackend)
            uuid = await node_uuid(cluster, "n1")
            process = backend.mounts["n1"].popen
            assert process is not None
            process.kill()
            process.wait(10)
            await backend.collect(tmp_path / "run")
        events = [json.loads(line) for line in (tmp_path / "run" / "nodes" / "n1" / "events.jsonl").read_text()
                  .splitlines()]
        assert any(e["event"] == "node_started" and e["uuid"] == uuid for e in events), events[:3]

    asyncio.run(scenario())


def test_two_erases_of_one_node_at_once_keep_its_event_log_once(tmp_path: Path) -> None:
    # The clean default campaign at seed 2 (c27bf6c) ended INVALID: a wipe cancelled at the run's end still
    # erased n3 in a thread while the membership heal wiped it again; both read and kept its event log, so
    # every line before the wipe was collected twice and the amnesia checker saw n3 go from epoch 9 to 1.
    async def scenario() -> None:
        async with local_cluster(tmp_path / "cluster", client_timeout=5.0) as (cluster, _):
            backend = cluster.backend
            assert isinstance(backend, LocalBackend)
            await cluster.processes.kill("n1")
            await asyncio.gather(backend.erase("n1"), backend.erase("n1"))
            await backend.collect(tmp_path / "run")
        lines = (tmp_path / "run" / "nodes" / "n1" / "events.jsonl").read_text().splitlines()
        assert lines and len(lines) == len(set(lines)), f"{len(lines) - len(set(lines))} lines kept twice"

    asyncio.run(scenario())
