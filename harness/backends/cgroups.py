"""Each local process in a cgroup of its own, so partitions cut its links whatever address it sends from.

A process that connects without binding its socket sends from 127.0.0.1, not from its own loopback
address, so an iptables rule on source addresses cannot cut its outgoing links. iptables can match the
sending socket's cgroup v2 instead (``-m cgroup --path``): the local backend starts every process inside
``<cgroup2>/fencepost/<run>/<name>`` (a shell wrapper moves itself there, then execs the process, so
every socket it ever opens belongs to that cgroup), and the partitioner drops by that path as well as by
source address. Without a writable cgroup v2 hierarchy the backend falls back to source addresses,
which serve systems that bind their outgoing sockets (the reference system does).

The cgroup also holds the process's whole tree, whatever its descendants do with sessions and process
groups: PostgreSQL's postmaster forks backends that each call ``setsid()``, so a signal to the
postmaster's process group reaches none of them. Kill and pause therefore act on the cgroup too:
``cgroup.kill`` SIGKILLs every process in it (frozen ones included) and ``cgroup.freeze`` stops every one
of them, both without asking the processes anything.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable, Sequence
from pathlib import Path

BASE = "fencepost"
WRAPPER = 'echo $$ > "$0" && exec "$@"'
SETTLE_S = 10.0
"""How long freezing, thawing or emptying a cgroup may take before we give up waiting."""


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

    def freeze(self, name: str, timeout: float = SETTLE_S) -> bool:
        """Freeze every process in ``name``'s cgroup, its children that left its process group included (a
        SIGSTOP to the group misses those); whether the kernel said ``frozen 1`` within ``timeout``."""
        return freeze_group(self.base / name, timeout)

    def thaw(self, name: str, timeout: float = SETTLE_S) -> bool:
        """Undo :meth:`freeze`; whether the kernel said ``frozen 0`` within ``timeout``."""
        return thaw_group(self.base / name, timeout)

    def kill(self, name: str, timeout: float = SETTLE_S) -> list[int]:
        """SIGKILL every process in ``name``'s cgroup and wait until it is empty; the pids still there after
        ``timeout`` (none, normally). See :func:`kill_group`."""
        return kill_group(self.base / name, timeout)

    def thaw_all(self, timeout: float = SETTLE_S) -> None:
        """:meth:`thaw` every process's cgroup of the run (see :func:`thaw_tree`)."""
        thaw_tree(self.base, timeout)

    def kill_all(self, timeout: float = SETTLE_S) -> list[int]:
        """:meth:`kill` every process's cgroup of the run; the pids that were in them (see :func:`kill_tree`)."""
        return kill_tree(self.base, timeout)

    def remove(self, timeout: float = 5.0) -> None:
        """Remove the run's cgroups once their processes are gone (an exited process leaves a cgroup only
        after it is reaped)."""
        remove_tree(self.base, timeout)


def _write(group: Path, control: str, value: str) -> bool:
    """Write ``value`` to ``group``'s control file; False when it cannot be written (the cgroup went away,
    or the kernel predates that control file)."""
    try:
        (group / control).write_text(value)
    except OSError:
        return False
    return True


def _frozen(group: Path) -> str | None:
    """The ``frozen`` line of ``group``'s ``cgroup.events`` ("1" or "0"), or None when it cannot be read."""
    try:
        lines = (group / "cgroup.events").read_text().splitlines()
    except OSError:
        return None
    return next((line.split()[1] for line in lines if line.startswith("frozen ")), None)


def procs(group: Path) -> list[int]:
    """The processes in ``group`` (exited ones awaiting their parent's wait are not listed); none when the
    cgroup is gone."""
    try:
        return [int(p) for p in (group / "cgroup.procs").read_text().split()]
    except OSError:
        return []


def _wait(done: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def _set_frozen(group: Path, value: str, timeout: float) -> bool:
    if not group.is_dir():
        return True  # nothing in it to freeze or thaw
    if not _write(group, "cgroup.freeze", value):
        return False

    def settled() -> bool:
        state = _frozen(group)
        return state == value or (state is None and not group.is_dir())  # removed meanwhile: nothing left

    return _wait(settled, timeout)


def freeze_group(group: Path, timeout: float = SETTLE_S) -> bool:
    """Write 1 to ``group``'s ``cgroup.freeze`` and wait for ``frozen 1`` in its ``cgroup.events`` (the
    write only asks: each process freezes at its next return to user space). Whether it froze within
    ``timeout``; a cgroup that is not there counts as frozen (it holds nothing), one whose kernel has no
    freezer (before Linux 5.2) does not."""
    return _set_frozen(group, "1", timeout)


def thaw_group(group: Path, timeout: float = SETTLE_S) -> bool:
    """Write 0 to ``group``'s ``cgroup.freeze`` and wait for ``frozen 0``; whether it thawed within
    ``timeout`` (a cgroup that is not there counts as thawed)."""
    return _set_frozen(group, "0", timeout)


def kill_group(group: Path, timeout: float = SETTLE_S) -> list[int]:
    """SIGKILL every process in ``group`` and wait until ``cgroup.procs`` is empty, then thaw the cgroup
    so that a process started in it later does not start frozen. ``cgroup.kill`` has the kernel kill them
    all, frozen ones too, with no fork escaping it; a kernel without it (before Linux 5.14) gets a SIGKILL
    to each listed process until none is left.

    Returns the pids still there after ``timeout``: none, normally, so a restarted server never meets a
    survivor of the old one (PostgreSQL refuses to start while an old backend holds its shared memory)."""
    if not group.is_dir():
        return []
    one_by_one = not _write(group, "cgroup.kill", "1")

    def empty() -> bool:
        left = procs(group)
        if one_by_one:
            for pid in left:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
        return not left

    _wait(empty, timeout)
    _write(group, "cgroup.freeze", "0")
    return procs(group)


def _groups(base: Path) -> list[Path]:
    """The cgroups directly under ``base`` (one per process of a run); none when ``base`` is gone."""
    try:
        return sorted(p for p in base.iterdir() if p.is_dir())
    except OSError:
        return []


def thaw_tree(base: Path, timeout: float = SETTLE_S) -> None:
    """:func:`thaw_group` on every cgroup under ``base``, so that a paused run's processes take the SIGTERM
    of a teardown as they would unpaused (a frozen process handles no signal but SIGKILL)."""
    for group in _groups(base):
        thaw_group(group, timeout)


def kill_tree(base: Path, timeout: float = SETTLE_S) -> list[int]:
    """:func:`kill_group` on every cgroup under ``base`` (each process's), frozen or not, so that nothing
    a run started outlives it, however its processes left their sessions; the pids that were in them."""
    found: list[int] = []
    for group in _groups(base):
        found.extend(procs(group))
        kill_group(group, timeout)
    return found


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
