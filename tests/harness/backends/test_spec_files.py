"""A process's files before start (``ProcessSpec.files``), and cluster-wide files given as text."""

from __future__ import annotations

import asyncio
import http.client
import ipaddress
from pathlib import Path
from typing import Any

import pytest

from harness.backends import docker_objects as objs
from harness.backends.docker_layout import DockerLayout
from harness.backends.local import LocalBackend
from harness.backends.local_layout import LocalLayout
from harness.cluster import running
from harness.cluster_view import ClusterView
from harness.config import TestConfig
from harness.plugin_api import NODE, Layout, ProcessSpec
from tests.harness.backends.process_only import ProcessOnly

SERVER = ("import http.server, os, sys; os.chdir(sys.argv[3]); assert os.path.exists('id'), 'no id file'; "
          "http.server.HTTPServer((sys.argv[1], int(sys.argv[2])), "
          "http.server.SimpleHTTPRequestHandler).serve_forever()")


class NeedsItsId(ProcessOnly):
    """One node that refuses to start without an id file in its data directory, and serves that directory."""

    name = "needs-its-id"
    description = "a server that reads files it needs before it starts"
    capabilities = frozenset({"processes", "disk"})

    def processes(self, test: TestConfig, layout: Layout) -> list[ProcessSpec]:
        host = layout.host("n1") if layout.backend == "local" else "0.0.0.0"
        port, data = layout.port("n1"), layout.data_dir("n1")
        argv = (layout.python, "-c", SERVER, host, str(port), data)
        return [ProcessSpec("n1", NODE, argv, port, data_dir=data,
                            files={"id": "n1\n", "conf/extra.bin": b"\x00\x01"})]


def fetch(cluster: ClusterView, path: str) -> bytes | None:
    """The file at ``path`` under n1's data directory, as n1 serves it; None when it does not answer."""
    host, port = cluster.address("n1")
    conn = http.client.HTTPConnection(host, port, timeout=2.0)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.read() if response.status == 200 else None
    except OSError:
        return None
    finally:
        conn.close()


async def answered(cluster: ClusterView, path: str) -> bytes | None:
    """:func:`fetch`, retried for up to 10 s while the server starts."""
    for _ in range(100):
        got = await asyncio.to_thread(fetch, cluster, path)
        if got is not None:
            return got
        await asyncio.sleep(0.1)
    return None


def change_the_id(data_dir: Path) -> dict[str, Any]:
    """What the process might do to its own file while it runs."""
    (data_dir / "id").write_text("changed")
    return {}


async def files_before_each_start(cluster: ClusterView) -> None:
    """The files are there at the first start, a restart keeps what the process's directory holds, and a
    wipe's empty directory gets them again."""
    assert await answered(cluster, "/id") == b"n1\n"
    assert await answered(cluster, "/conf/extra.bin") == b"\x00\x01"
    await cluster.processes.kill("n1")
    await cluster.disk.edit("n1", change_the_id)
    await cluster.processes.start("n1")
    assert await answered(cluster, "/id") == b"changed"
    await cluster.wipe("n1")
    assert await answered(cluster, "/id") == b"n1\n"


def test_a_process_finds_its_files_before_every_start_that_lacks_them(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running(TestConfig(system="needs-its-id", nodes=1), NeedsItsId(), LocalBackend(),
                           tmp_path) as cluster:
            await files_before_each_start(cluster)

    asyncio.run(scenario())


def test_files_must_lie_inside_the_data_directory() -> None:
    for bad in ("/etc/passwd", "../outside", "a/../../b", ""):
        with pytest.raises(ValueError, match="inside data_dir"):
            ProcessSpec("n1", NODE, ("true",), 1, data_dir="/d", files={bad: b""})
    with pytest.raises(ValueError, match="need a data_dir"):
        ProcessSpec("n1", NODE, ("true",), 1, files={"id": b""})


def test_write_file_takes_text_and_refuses_other_types_naming_itself(tmp_path: Path) -> None:
    local = LocalLayout(tmp_path, None)  # type: ignore[arg-type]  # files need no addresses
    local.write_file("secret", "text, é")
    assert Path(local.file("secret")).read_bytes() == "text, é".encode()
    with pytest.raises(TypeError, match=r"write_file\('n'\) takes bytes or str, not int"):
        local.write_file("n", 5)  # type: ignore[arg-type]
    docker = DockerLayout(ipaddress.IPv4Network("127.0.99.0/24"), tmp_path / "docker")
    docker.write_file("secret", "text")
    assert docker.files["secret"][0] == b"text"


DOCKER_REASON = objs.engine_unavailable()


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.skipif(DOCKER_REASON is not None, reason=f"docker tests need a Docker engine: {DOCKER_REASON}")
def test_a_container_finds_its_files_before_every_start_that_lacks_them(tmp_path: Path) -> None:
    from harness.backends.docker import DockerBackend

    async def scenario() -> None:
        async with running(TestConfig(system="needs-its-id", nodes=1, backend="docker"), NeedsItsId(),
                           DockerBackend(), tmp_path) as cluster:
            await files_before_each_start(cluster)

    asyncio.run(scenario())
