"""Each local process in a cgroup of its own, so partitions cut its links whatever address it sends from.

A process that connects without binding its socket sends from 127.0.0.1, not from its own loopback
address, so an iptables rule on source addresses cannot cut its outgoing links. iptables can match the
sending socket's cgroup v2 instead (``-m cgroup --path``): the local backend starts every process inside
``<cgroup2>/fencepost/<run>/<name>`` (a shell wrapper moves itself there, then execs the process, so
every socket it ever opens belongs to that cgroup), and the partitioner drops by that path as well as by
source address. Without a writable cgroup v2 hierarchy the backend falls back to source addresses,
which serve systems that bind their outgoing sockets (the reference system does).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Sequence
from pathlib import Path

BASE = "fencepost"
WRAPPER = 'echo $$ > "$0" && exec "$@"'


def cgroup2_root() -> Path | None:
    """Where the cgroup v2 hierarchy is mounted and writable by us, or None."""
    try:
        with open("/proc/mounts") as fh:
            for line in fh:
                parts = line.split()
                if len(parts) >= 3 and parts[2] == "cgroup2" and os.access(parts[1], os.W_OK):
                    return Path(parts[1])
    except OSError:
        pass
    return None


class ProcessGroups:
    """The cgroups of one run's processes, under ``<root>/fencepost/<tag>``.

    Args:
        root: the cgroup v2 mount point.
        tag: the run's short id.
    """

    def __init__(self, root: Path, tag: str) -> None:
        self.root = root
        self.base = root / BASE / tag
        self.base.mkdir(parents=True, exist_ok=True)

    def path(self, name: str) -> str:
        """``fencepost/<tag>/<name>``: what ``iptables -m cgroup --path`` takes for process ``name``."""
        return (self.base / name).relative_to(self.root).as_posix()

    def wrap(self, name: str, argv: Sequence[str]) -> list[str]:
        """``argv`` started inside process ``name``'s cgroup (made here): the same pid, execed in place."""
        group = self.base / name
        group.mkdir(exist_ok=True)
        return ["sh", "-c", WRAPPER, str(group / "cgroup.procs"), *argv]

    def remove(self, timeout: float = 5.0) -> None:
        """Remove the run's cgroups once their processes are gone (an exited process leaves a cgroup only
        after it is reaped)."""
        remove_tree(self.base, timeout)


def remove_tree(base: Path, timeout: float = 5.0) -> None:
    """``rmdir`` every cgroup under ``base`` and ``base`` itself, retrying while processes drain."""
    deadline = time.monotonic() + timeout
    while base.exists():
        for group in sorted((p for p in base.iterdir() if p.is_dir()), reverse=True):
            with contextlib.suppress(OSError):
                group.rmdir()
        with contextlib.suppress(OSError):
            base.rmdir()
        if not base.exists() or time.monotonic() > deadline:
            return
        time.sleep(0.05)
