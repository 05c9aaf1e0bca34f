"""Kill and pause reach a node's whole process tree: a server started through a shell wrapper
(``sh -c 'server ...'``, no ``exec``) is really killed and really paused, not only its shell."""

from __future__ import annotations

import asyncio
import http.client
import os
from pathlib import Path

import pytest

from harness.backends import docker_objects as objs
from harness.backends.local import LocalBackend
from harness.cluster import running
from harness.cluster_view import ClusterView
from harness.config import TestConfig
from harness.plugin_api import NODE, Layout, ProcessSpec
from tests.harness.backends.process_only import ProcessOnly

SERVER = "import http.server, sys; http.server.HTTPServer((sys.argv[1], int(sys.argv[2])), " \
         "http.server.SimpleHTTPRequestHandler).serve_forever()"


class ShellWrapped(ProcessOnly):
    """One node whose server runs under a shell that does not exec it (the shell stays its parent)."""

    name = "shell-wrapped"
    description = "an HTTP server started through sh -c, as plugins often do"
    capabilities = frozenset({"processes"})

    def processes(self, test: TestConfig, layout: Layout) -> list[ProcessSpec]:
        host, port, data = layout.host("n1"), layout.port("n1"), layout.data_dir("n1")
        if layout.backend == "local":
            Path(data).mkdir(parents=True, exist_ok=True)
        else:  # a container listens on all its addresses; its data directory is a volume
            host = "0.0.0.0"
        script = f"cd {data} && {layout.python} -c '{SERVER}' {host} {port}; echo the server exited"
        return [ProcessSpec("n1", NODE, ("sh", "-c", script), port, data_dir=data)]


def answers(host: str, port: int) -> bool:
    """Whether the server answers an HTTP request within a second."""
    conn = http.client.HTTPConnection(host, port, timeout=1.0)
    try:
        conn.request("GET", "/")
        return conn.getresponse().status == 200
    except OSError:
        return False
    finally:
        conn.close()


def servers_under(folder: str) -> list[int]:
    """The pids of live Python servers started in ``folder`` (the server's working directory; not its shell)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
                if os.readlink(entry / "cwd") == folder and argv[0] != b"sh" and any(b"http.server" in a for a in argv):
                    found.append(int(entry.name))
            except (OSError, IndexError):
                continue
    return found


async def paused_then_killed(cluster: ClusterView) -> None:
    """The server answers, stops answering while paused, answers again once resumed, and is gone once killed."""
    host, port = cluster.address("n1")
    assert await asyncio.to_thread(answers, host, port)
    await cluster.processes.pause("n1")
    assert not await asyncio.to_thread(answers, host, port), "the paused server still answered"
    await cluster.processes.resume("n1")
    assert await asyncio.to_thread(answers, host, port)
    await cluster.processes.kill("n1")
    assert not await asyncio.to_thread(answers, host, port), "the killed server still answered"
    assert not cluster.processes.running("n1")


def test_kill_and_pause_reach_a_server_behind_a_shell_wrapper(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running(TestConfig(system="shell-wrapped", nodes=1), ShellWrapped(), LocalBackend(),
                           tmp_path) as cluster:
            host, port = cluster.address("n1")
            folder = str(cluster.specs["n1"].data_dir)
            assert len(servers_under(folder)) == 1
            await paused_then_killed(cluster)
            assert servers_under(folder) == [], "the server outlived the kill of its shell"
            await cluster.processes.start("n1")
            for _ in range(100):
                if await asyncio.to_thread(answers, host, port):
                    break
                await asyncio.sleep(0.05)
            else:
                raise AssertionError("the restarted server never answered")
        assert servers_under(folder) == [], "the server outlived the teardown"

    asyncio.run(scenario())


DOCKER_REASON = objs.engine_unavailable()


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.skipif(DOCKER_REASON is not None, reason=f"docker tests need a Docker engine: {DOCKER_REASON}")
def test_kill_and_pause_reach_a_server_behind_a_shell_wrapper_in_a_container(tmp_path: Path) -> None:
    from harness.backends.docker import DockerBackend

    async def scenario() -> None:
        async with running(TestConfig(system="shell-wrapped", nodes=1, backend="docker"), ShellWrapped(),
                           DockerBackend(), tmp_path) as cluster:
            await paused_then_killed(cluster)

    asyncio.run(scenario())
