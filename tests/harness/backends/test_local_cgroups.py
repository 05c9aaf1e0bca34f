"""Kill, pause and teardown reach a local server's whole process tree through its cgroup, children that left
its process group included: a server whose worker calls ``setsid()`` (PostgreSQL's backends do) is paused,
killed and reaped whole, not only its main process."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.backends.cgroups import cgroup2_root
from harness.backends.local import LocalBackend
from harness.backends.reaper import reap_run_dir
from harness.cluster import running
from harness.cluster_view import ClusterView
from harness.config import TestConfig
from harness.plugin_api import NODE, Layout, ProcessSpec
from tests.harness.backends.process_only import ProcessOnly

pytestmark = pytest.mark.skipif(cgroup2_root() is None, reason="needs a writable cgroup v2 hierarchy")

# The main process listens (readiness); its forked worker leaves the session and process group, then
# counts, writing "<its pid> <count>" to COUNTER_FILE. Neither command line names the cluster folder, so
# the reaper can find the worker only through its cgroup.
SERVER = """
import os, socket, sys, time
listener = socket.socket()
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind((sys.argv[1], int(sys.argv[2])))
listener.listen()
out = os.environ["COUNTER_FILE"]
if os.fork() == 0:
    listener.close()
    os.setsid()
    n = 0
    while True:
        n += 1
        with open(out + ".tmp", "w") as fh:
            fh.write(f"{os.getpid()} {n}")
        os.replace(out + ".tmp", out)
        time.sleep(0.01)
while True:
    listener.accept()[0].close()
"""


class SetsidWorker(ProcessOnly):
    """One node whose server forks a worker into a session of its own."""

    name = "setsid-worker"
    description = "a server whose worker calls setsid(), as PostgreSQL's backends do"
    capabilities = frozenset({"processes"})

    def processes(self, test: TestConfig, layout: Layout) -> list[ProcessSpec]:
        data = layout.data_dir("n1")
        argv = (sys.executable, "-c", SERVER, layout.host("n1"), str(layout.port("n1")))
        return [ProcessSpec("n1", NODE, argv, layout.port("n1"), data_dir=data,
                            env={"COUNTER_FILE": str(Path(data) / "counter")})]


SEEN: list[int] = []
"""Every worker pid a test saw, so that a failing test (or the code before the cgroup kill) leaves none."""


@pytest.fixture(autouse=True)
def kill_seen_workers() -> Iterator[None]:
    """SIGKILL whatever worker a test saw and left alive."""
    yield
    for pid in SEEN:
        if alive(pid):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    SEEN.clear()


def alive(pid: int) -> bool:
    """Whether ``pid`` exists and has not exited (a zombie has exited: nothing reaps orphans here)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def counter(cluster: ClusterView) -> tuple[int, int]:
    """The worker's pid and its count so far, once it has written one."""
    path = Path(str(cluster.specs["n1"].data_dir)) / "counter"
    deadline = time.monotonic() + 10
    while not path.exists():
        assert time.monotonic() < deadline, "the worker never counted"
        time.sleep(0.01)
    pid, count = (int(x) for x in path.read_text().split())
    if pid not in SEEN:
        SEEN.append(pid)
    return pid, count


async def counts(cluster: ClusterView, wait: float = 0.3) -> bool:
    """Whether the worker's count grows within ``wait`` seconds."""
    _, before = counter(cluster)
    await asyncio.sleep(wait)
    return counter(cluster)[1] > before


async def worker_of(cluster: ClusterView) -> int:
    """The running worker's pid, checked to be outside the main process's session and group."""
    backend = cluster.backend
    assert isinstance(backend, LocalBackend)
    main = backend.supervisor.children["n1"].pid
    assert main is not None
    pid, _ = counter(cluster)
    assert pid != main and os.getsid(pid) != os.getsid(main) and os.getpgid(pid) != os.getpgid(main)
    assert await counts(cluster)
    return pid


def test_pause_stops_a_worker_that_left_the_process_group_and_resume_restarts_it(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running(TestConfig(system="setsid-worker", nodes=1), SetsidWorker(), LocalBackend(),
                           tmp_path) as cluster:
            await worker_of(cluster)
            await cluster.processes.pause("n1")
            assert not await counts(cluster), "the paused server's setsid worker kept counting"
            await cluster.processes.resume("n1")
            assert await counts(cluster), "the resumed server's worker did not count again"

    asyncio.run(scenario())


async def restarted(cluster: ClusterView, old: int) -> int:
    """Start n1 again; the pid of the new server's worker once it counts (checked as in :func:`worker_of`)."""
    await cluster.processes.start("n1")
    deadline = time.monotonic() + 10
    while counter(cluster)[0] == old:
        assert time.monotonic() < deadline, "the restarted server's worker never counted"
        await asyncio.sleep(0.01)
    return await worker_of(cluster)


def test_kill_leaves_no_worker_and_a_restart_runs_unfrozen(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running(TestConfig(system="setsid-worker", nodes=1), SetsidWorker(), LocalBackend(),
                           tmp_path) as cluster:
            first = await worker_of(cluster)
            await cluster.processes.kill("n1")
            assert not alive(first), "the killed server's setsid worker survived"
            second = await restarted(cluster, first)
            await cluster.processes.pause("n1")  # a paused server is killed whole, and its cgroup thawed
            await cluster.processes.kill("n1")
            assert not alive(second), "the killed paused server's setsid worker survived"
            await restarted(cluster, second)

    asyncio.run(scenario())


def test_teardown_of_a_paused_server_leaves_no_worker_and_no_cgroup(tmp_path: Path) -> None:
    backend = LocalBackend()

    async def scenario() -> int:
        async with running(TestConfig(system="setsid-worker", nodes=1), SetsidWorker(), backend,
                           tmp_path) as cluster:
            pid = await worker_of(cluster)
            await cluster.processes.pause("n1")
            return pid

    worker = asyncio.run(scenario())
    assert not alive(worker), "the setsid worker outlived the teardown"
    assert backend.groups is not None and not backend.groups.base.exists()


def test_the_reaper_kills_a_worker_left_in_a_frozen_cgroup(tmp_path: Path) -> None:
    # What a SIGKILLed harness leaves: its cleanup.json, a paused (frozen) server and its setsid worker,
    # whose command line does not name the cluster folder.
    backend = LocalBackend()

    async def scenario() -> None:
        async with running(TestConfig(system="setsid-worker", nodes=1), SetsidWorker(), backend,
                           tmp_path) as cluster:
            worker = await worker_of(cluster)
            await cluster.processes.pause("n1")
            done = await asyncio.to_thread(reap_run_dir, tmp_path)
            assert not alive(worker), f"the reaper left the setsid worker: {done}"
            assert backend.groups is not None and not backend.groups.base.exists()
            assert any("cgroup" in line for line in done), done

    asyncio.run(scenario())
