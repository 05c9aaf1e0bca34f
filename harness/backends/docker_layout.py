"""Where the docker backend puts a run's processes: one container each, on the run's own network.

Every process gets the next address of the run's /24 (from ``.10`` up) and ports from 7000, its data
directory ``/data`` on a volume of its own, shared folders ``/shared/<key>`` on volumes the processes
naming them share, and cluster-wide files under ``/cluster`` (copied into every container). Its output
is kept on the harness's side in ``RUN/cluster/logs/<name>.log``.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path

from harness.backends.image import CODE_ROOT
from harness.process_spec import as_bytes

FIRST_HOST = 10
BASE_PORT = 7000
DATA_DIR = "/data"


class DockerLayout:
    """Paths and addresses inside the run's containers.

    Args:
        subnet: the run network's /24.
        cluster_dir: ``RUN/cluster`` on the harness's side (logs).
    """

    backend = "docker"
    python = "python3"
    code_root = CODE_ROOT

    def __init__(self, subnet: ipaddress.IPv4Network, cluster_dir: Path) -> None:
        self.subnet = subnet
        self.dir = cluster_dir
        self.hosts: dict[str, str] = {}
        self.files: dict[str, tuple[bytes, int]] = {}

    def host(self, name: str) -> str:
        """The next address of the run's network, kept for ``name``."""
        if name not in self.hosts:
            self.hosts[name] = str(self.subnet[FIRST_HOST + len(self.hosts)])
        return self.hosts[name]

    def port(self, name: str, index: int = 0) -> int:
        """7000, 7001, ...: every container has its own address, so ports never collide."""
        self.host(name)
        return BASE_PORT + index

    def data_dir(self, name: str) -> str:
        """``/data``, on the process's own volume."""
        return DATA_DIR

    def shared_dir(self, key: str) -> str:
        """``/shared/<key>``, on a volume every process naming ``key`` mounts."""
        return f"/shared/{key}"

    def file(self, name: str) -> str:
        """``/cluster/<name>`` in every container."""
        return f"/cluster/{name}"

    def write_file(self, name: str, data: bytes | str, mode: int = 0o600) -> None:
        """Keep the file (text as UTF-8), to be copied into every container as it is created."""
        self.files[name] = (as_bytes(data, f"write_file({name!r})"), mode)

    def log_path(self, name: str) -> Path:
        """``RUN/cluster/logs/<name>.log`` on the harness's side."""
        return self.dir / "logs" / f"{name}.log"
