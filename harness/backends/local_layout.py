"""Where the local backend puts a run's processes: its own loopback addresses, folders under ``RUN/cluster``.

Every process gets the next address of the run's block (:mod:`harness.backends.addresses`) and its own
ports there, a data directory ``cluster/data/<name>``, and a log ``cluster/logs/<name>.log``; shared
folders are ``cluster/shared/<key>`` and cluster-wide files ``cluster/files/<name>``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

from harness.backends.addresses import AddressBlock
from harness.backends.supervisor import free_port
from harness.process_spec import as_bytes


def code_root_of(code: Mapping[str, Path]) -> str | None:
    """The folder that holds every code folder at its relative path (``{"system": /repo/system}`` gives
    ``/repo``), or None when there is no code or the folders have no common root.

    Raises:
        ValueError: a folder does not end with its relative path, or two folders disagree on the root.
    """
    roots = set()
    for rel, path in code.items():
        path = Path(path).resolve()
        parts = Path(rel).parts
        if tuple(path.parts[-len(parts):]) != parts:
            raise ValueError(f"code folder {path} does not end with {rel}")
        roots.add(path.parents[len(parts) - 1])
    if len(roots) > 1:
        raise ValueError(f"code folders under different roots: {', '.join(sorted(map(str, roots)))}")
    return str(roots.pop()) if roots else None


class LocalLayout:
    """Paths and addresses for processes started on this machine.

    Args:
        cluster_dir: ``RUN/cluster``.
        block: the run's address block.
        code_root: where the system's code lives (its processes' working directory and PYTHONPATH);
            defaults to ``cluster_dir``.
    """

    backend = "local"

    def __init__(self, cluster_dir: Path, block: AddressBlock, code_root: str | None = None) -> None:
        self.dir = cluster_dir
        self.block = block
        self.python = sys.executable
        self.code_root = code_root or str(cluster_dir)
        self.hosts: dict[str, str] = {}
        self.ports: dict[tuple[str, int], int] = {}

    def host(self, name: str) -> str:
        """The next address of the block, kept for ``name``."""
        if name not in self.hosts:
            self.hosts[name] = self.block.host(len(self.hosts) + 1)
        return self.hosts[name]

    def port(self, name: str, index: int = 0) -> int:
        """A free port on ``name``'s host (``index`` tells a process's several ports apart)."""
        if (name, index) not in self.ports:
            self.ports[(name, index)] = free_port(self.host(name))
        return self.ports[(name, index)]

    def data_dir(self, name: str) -> str:
        """``cluster/data/<name>``."""
        return str(self.dir / "data" / name)

    def shared_dir(self, key: str) -> str:
        """``cluster/shared/<key>`` (made here)."""
        path = self.dir / "shared" / key
        path.mkdir(parents=True, exist_ok=True)
        return str(path)

    def file(self, name: str) -> str:
        """``cluster/files/<name>``."""
        return str(self.dir / "files" / name)

    def write_file(self, name: str, data: bytes | str, mode: int = 0o600) -> None:
        """Write ``cluster/files/<name>`` with ``mode`` (text as UTF-8)."""
        path = Path(self.file(name))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(as_bytes(data, f"write_file({name!r})"))
        os.chmod(path, mode)

    def log_path(self, name: str) -> Path:
        """``cluster/logs/<name>.log``."""
        return self.dir / "logs" / f"{name}.log"
