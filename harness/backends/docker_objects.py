"""Docker plumbing for the docker backend: the engine check, labels, the per-test network, volumes, reaping.

Everything a run creates carries the label ``fencepost.run=<run id>``; :func:`reap` removes one run's
containers, then its networks and volumes, and :func:`reap` with no id removes every run's (what
``fencepost cluster down --all`` does after a SIGKILLed harness).
"""

from __future__ import annotations

import contextlib
import io
import ipaddress
import os
import random
import socket
import tarfile
from collections.abc import Iterator
from typing import Any

RUN_LABEL = "fencepost.run"

# Ryuk (testcontainers' reaper) cannot be pulled without a registry; the backend reaps by label itself.
os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")


def engine_unavailable() -> str | None:
    """None when a Docker engine answers, else why not, in one line."""
    try:
        import docker
    except ImportError:
        return "the docker Python package is not installed (pip install -e '.[dev]')"
    host = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
    if host.startswith("unix://"):  # probe the socket ourselves: docker-py leaks it when the connect fails
        with socket.socket(socket.AF_UNIX) as probe:
            probe.settimeout(5)
            try:
                probe.connect(host[len("unix://"):])
            except OSError as e:
                return f"no Docker engine answers at {host} ({e.strerror or e}); start dockerd or set DOCKER_HOST"
    try:  # a fixed (minimal) API version: no version query at construction, so the client can always be closed
        client = docker.from_env(timeout=5, version="1.24")
    except Exception as e:
        return f"the Docker client cannot be configured ({type(e).__name__}: {str(e)[:160]})"
    try:
        client.ping()
    except Exception as e:
        return f"no Docker engine answers ({type(e).__name__}: {str(e)[:160]}); start dockerd or set DOCKER_HOST"
    finally:
        client.close()
    return None


@contextlib.contextmanager
def client(timeout: int = 60) -> Iterator[Any]:
    """A docker client that is always closed."""
    import docker

    c = docker.from_env(timeout=timeout)
    try:
        yield c
    finally:
        c.close()


def labels(run_id: str, **extra: str) -> dict[str, str]:
    """The labels of everything a run creates."""
    return {RUN_LABEL: run_id, **extra}


def create_network(c: Any, name: str, run_id: str, attempts: int = 20) -> tuple[Any, ipaddress.IPv4Network]:
    """A bridge network with a /24 of its own (so containers keep fixed addresses across restarts)."""
    import docker.errors
    from docker.types import IPAMConfig, IPAMPool

    rng = random.Random()
    last: Exception | None = None
    for _ in range(attempts):
        subnet = ipaddress.IPv4Network(f"10.{rng.randint(160, 250)}.{rng.randint(0, 255)}.0/24")
        ipam = IPAMConfig(pool_configs=[IPAMPool(subnet=str(subnet), gateway=str(subnet[1]))])
        try:
            return c.networks.create(name, driver="bridge", ipam=ipam, labels=labels(run_id)), subnet
        except docker.errors.APIError as e:  # the subnet overlaps another network: pick another
            last = e
    raise RuntimeError(f"could not create docker network {name}: {last}")


def create_volume(c: Any, name: str, run_id: str) -> str:
    """A named volume carrying the run's label."""
    c.volumes.create(name=name, labels=labels(run_id))
    return name


def remove_volume(c: Any, name: str) -> None:
    """Remove a volume, ignoring one already gone."""
    import docker.errors

    with contextlib.suppress(docker.errors.NotFound):
        c.volumes.get(name).remove(force=True)


def read_file(container: Any, path: str) -> bytes | None:
    """A file's bytes from a container (running, paused or stopped), or None if it is not there."""
    import docker.errors

    try:
        stream, _ = container.get_archive(path)
        data = b"".join(stream)
    except docker.errors.NotFound:
        return None
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        for member in tar.getmembers():
            extracted = tar.extractfile(member)
            if extracted is not None:
                return extracted.read()
    return None


def reap(run_id: str | None = None) -> dict[str, int]:
    """Remove the containers, then networks, then volumes labelled with ``run_id`` (any run's when None)."""
    import docker.errors

    selector = f"{RUN_LABEL}={run_id}" if run_id else RUN_LABEL
    counts = {"containers": 0, "networks": 0, "volumes": 0}
    with client() as c:
        for container in c.containers.list(all=True, filters={"label": selector}):
            with contextlib.suppress(docker.errors.NotFound):
                container.remove(force=True, v=True)
                counts["containers"] += 1
        for network in c.networks.list(filters={"label": selector}):
            with contextlib.suppress(docker.errors.NotFound):
                network.remove()
                counts["networks"] += 1
        for volume in c.volumes.list(filters={"label": selector}):
            with contextlib.suppress(docker.errors.NotFound):
                volume.remove(force=True)
                counts["volumes"] += 1
    return counts


def leftovers(run_id: str | None = None) -> dict[str, list[str]]:
    """Names of the containers, networks and volumes still labelled with ``run_id`` (any run's when None)."""
    selector = f"{RUN_LABEL}={run_id}" if run_id else RUN_LABEL
    with client() as c:
        return {"containers": sorted(x.name for x in c.containers.list(all=True, filters={"label": selector})),
                "networks": sorted(x.name for x in c.networks.list(filters={"label": selector})),
                "volumes": sorted(x.name for x in c.volumes.list(filters={"label": selector}))}
