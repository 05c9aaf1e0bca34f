"""A process of the cluster as a system describes it (:class:`ProcessSpec`), the :class:`Layout` a backend
builds those descriptions from, and the roles a process plays.

The lowest layer of the plugin contract: plain records and one protocol, importing nothing of ours, so the
contract's other modules (:mod:`harness.plugin_api`, :mod:`harness.cluster_view`) and the backends build
on it without an import cycle.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

NODE = "node"
"""A data node: what faults target by default (``cluster.nodes()``)."""
CONTROL = "control"
"""A control-plane process: partitions may cut it off; process faults name it explicitly."""
SERVICE = "service"
"""Infrastructure the test needs (a metadata store, say): started first, never faulted."""
ROLES = (NODE, CONTROL, SERVICE)


@dataclass(frozen=True)
class ProcessSpec:
    """One process of the cluster, as the system describes it.

    Attributes:
        name: unique in the cluster (``n1``, ``op1``, ``master``).
        role: :data:`NODE`, :data:`CONTROL` or :data:`SERVICE`.
        argv: its command line, built from the layout's paths and addresses.
        port: the port it serves on at its layout host; readiness is a TCP connection there.
        data_dir: where it keeps its state (a layout path), or None.
        env: extra environment variables.
        autostart: started at setup; a standby (False) is started by a fault later.
        ready: wait at setup until the port accepts connections.
        observations: file names under ``data_dir`` that record what the process saw rather than its
            state (an event log): disk faults leave them alone, and they are collected into the run.
        shared: names of shared directories the process uses (:meth:`Layout.shared_dir`).
        mmap: the process maps its data files into memory, so power-loss faults mount its disk in the
            lazy filesystem's cached mode (FUSE refuses shared maps of direct-I/O files).
        files: files the process needs in its data directory before it starts (an id file, a config), by
            path relative to ``data_dir``, as bytes or text (UTF-8). Each is written before every start at
            which it is missing: before the first start, and again after a wipe empties the directory; a
            restart keeps what the process left there. ``data_dir`` itself always exists at start.
        start_timeout: seconds its port may take to open at setup, where the backend's default (60 s) is too
            short: a process that builds its data directory first (PostgreSQL's ``initdb`` or ``pg_basebackup``
            through the lazy filesystem of a power-loss run), or None for the default.
        discard_data: remove ``data_dir`` (and its lazy disk) when the run ends, and when the next start reaps
            a killed run: for a system whose data is large and says nothing its logs and observations do not
            (a PostgreSQL cluster is tens of megabytes a node). Kept (False) by default, for post-mortems.
    """

    name: str
    role: str
    argv: tuple[str, ...]
    port: int
    data_dir: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    autostart: bool = True
    ready: bool = True
    observations: tuple[str, ...] = ()
    shared: tuple[str, ...] = ()
    mmap: bool = False
    files: Mapping[str, bytes | str] = field(default_factory=dict)
    discard_data: bool = False
    start_timeout: float | None = None

    def __post_init__(self) -> None:
        for rel in self.files:
            if rel.startswith("/") or ".." in rel.split("/") or not rel.strip("/"):
                raise ValueError(f"process {self.name}: files must be paths inside data_dir, not {rel!r}")
        if self.files and self.data_dir is None:
            raise ValueError(f"process {self.name}: files need a data_dir to go in")


@runtime_checkable
class Layout(Protocol):
    """Where a backend puts processes: the paths and addresses a system builds its process specs from."""

    backend: str
    """The backend's name (local, docker)."""
    python: str
    """The Python interpreter processes run with."""
    code_root: str
    """Where the system's code lives as its processes see it (their working directory and PYTHONPATH)."""

    def host(self, name: str) -> str:
        """The address process ``name`` binds and is reached at (its own, so partitions can cut it)."""
        ...

    def port(self, name: str, index: int = 0) -> int:
        """A port for process ``name`` on its host (``index`` tells one process's several ports apart)."""
        ...

    def data_dir(self, name: str) -> str:
        """Process ``name``'s own data directory, as the process sees it."""
        ...

    def shared_dir(self, key: str) -> str:
        """A directory shared by every process that names ``key`` in its spec's ``shared``."""
        ...

    def file(self, name: str) -> str:
        """Where every process sees the cluster-wide file ``name`` that :meth:`write_file` wrote."""
        ...

    def write_file(self, name: str, data: bytes | str, mode: int = 0o600) -> None:
        """Write a cluster-wide file (a secret, a config) that every process can read at :meth:`file`; text
        (a ``str``) is written as UTF-8."""
        ...

    def log_path(self, name: str) -> Path:
        """Where process ``name``'s output is kept on the harness's machine."""
        ...


def as_bytes(data: bytes | str, what: str = "write_file") -> bytes:
    """File content as bytes: text is encoded as UTF-8.

    Raises:
        TypeError: ``data`` is neither, in one line naming ``what`` took it.
    """
    if isinstance(data, str):
        return data.encode("utf-8")
    if isinstance(data, bytes | bytearray | memoryview):
        return bytes(data)
    raise TypeError(f"{what} takes bytes or str, not {type(data).__name__}")
