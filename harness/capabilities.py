"""What can be done to a cluster: small capability protocols, as Jepsen splits DB from Kill, Pause and Net.

A fault package declares the capabilities it needs (its ``needs`` attribute, a set of the names below).
A run has a capability when its system offers it (:attr:`harness.plugin_api.SystemPlugin.capabilities`)
and its backend can carry it out (:attr:`harness.backends.backend.Backend.capabilities`); a test that asks
for a fault its run cannot do is refused before anything starts, with one line naming the fault and the
missing capability.

The backend implements :class:`Processes`, :class:`Network`, :class:`Clock` and :class:`Disk` for any
system's processes; the system implements :class:`Primaries` and :class:`Membership`, because only it
knows who leads and how members join and leave.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

PROCESSES = "processes"
NETWORK = "network"
CLOCK = "clock"
DISK = "disk"
POWER_LOSS = "power-loss"
PRIMARIES = "primaries"
MEMBERSHIP = "membership"

CAPABILITIES: Mapping[str, str] = {
    PROCESSES: "kill, start, pause and resume any of the cluster's processes",
    NETWORK: "cut links between processes (partitions) and heal them",
    CLOCK: "move a node's wall clock (libfaketime)",
    DISK: "wipe a node's data directory, and damage the files the system names",
    POWER_LOSS: "lose a node's unsynced writes (its data directory on the lazy FUSE filesystem)",
    PRIMARIES: "say which nodes lead (the system's own status API)",
    MEMBERSHIP: "add and remove members while the test runs (the system's membership State)",
}
"""Every capability name, with what it lets a fault do."""

BACKEND_CAPABILITIES = frozenset({PROCESSES, NETWORK, CLOCK, DISK, POWER_LOSS})
"""The capabilities a backend carries out; the others come from the system alone."""


class CapabilityMissing(RuntimeError):
    """A fault needs a capability that this run's system or backend does not offer."""


@runtime_checkable
class Processes(Protocol):
    """Start, stop and freeze the cluster's processes by name (Jepsen's Kill and Pause)."""

    async def kill(self, name: str) -> None:
        """SIGKILL the process and wait until it is gone (a no-op if it is not running)."""
        ...

    async def start(self, name: str, extra_args: Sequence[str] = ()) -> None:
        """Start the process again with its data (``extra_args`` this time only); a no-op if it runs."""
        ...

    async def pause(self, name: str) -> None:
        """Freeze the process (SIGSTOP, or the cgroup freezer)."""
        ...

    async def resume(self, name: str) -> None:
        """Thaw a paused process."""
        ...

    def running(self, name: str) -> bool:
        """Whether the process runs now (a paused process runs)."""
        ...

    async def wait_exit(self, name: str, timeout: float) -> int | None:
        """Wait for the process to exit on its own; its exit code, or None if it still runs after ``timeout``."""
        ...


@runtime_checkable
class Network(Protocol):
    """Cut and heal links between processes (Jepsen's Net)."""

    async def partition(self, grudge: Mapping[str, Sequence[str]]) -> None:
        """Drop traffic so that each process in ``grudge`` cannot reach the processes listed for it, and
        they cannot reach it; this replaces any partition in force."""
        ...

    async def heal(self) -> None:
        """Remove every network fault."""
        ...


@runtime_checkable
class Clock(Protocol):
    """Move nodes' wall clocks."""

    async def set_offset(self, node: str, seconds: float) -> None:
        """Set ``node``'s wall clock to real time plus ``seconds`` (0 puts it back)."""
        ...


@runtime_checkable
class Disk(Protocol):
    """Damage what nodes keep on disk."""

    async def erase(self, node: str) -> None:
        """Give a stopped node a new, empty data directory (what a wipe does between kill and start)."""
        ...

    async def lose_unsynced(self, nodes: Sequence[str], tear: bool, rng: random.Random) -> dict[str, Any]:
        """Power loss of ``nodes`` at once: kill them, make their disks forget every change never fsynced
        (tearing each disk's last write if ``tear``), start them again; say what each lost."""
        ...

    async def read_file(self, node: str, path: str) -> bytes | None:
        """The bytes of ``path`` (relative to the node's data directory), or None if there is no such file."""
        ...

    async def edit(self, node: str, change: Any) -> dict[str, Any]:
        """Run ``change(data_dir: pathlib.Path) -> dict`` on a stopped node's data directory (the backend
        brings the files to a place the harness can reach and back) and return what it says it did."""
        ...


@runtime_checkable
class Primaries(Protocol):
    """Who leads (Jepsen's Primary): optional, offered by systems that have leaders."""

    async def primaries(self, cluster: Any) -> list[str]:
        """The nodes that lead right now, the busiest first (each once); empty when none is known."""
        ...


@runtime_checkable
class Membership(Protocol):
    """A system's membership State, as in Jepsen's membership nemesis: the changes it can make while a
    test runs, and how to put things back."""

    def changes(self) -> Sequence[str]:
        """The kinds of change a fault window may ask for (its targets), e.g. ("add", "remove")."""
        ...

    async def change(self, cluster: Any, kind: str, rng: random.Random) -> dict[str, Any]:
        """Make one change of ``kind``; say what was done (``{"skipped": why}`` when it cannot be done now)."""
        ...

    async def restore(self, cluster: Any) -> dict[str, Any]:
        """Start putting the cluster back to its configured membership (the end of a window); say what."""
        ...

    async def settle(self, cluster: Any) -> None:
        """Put everything back and wait (bounded) until the membership is as configured (the heal step)."""
        ...


def missing(needs: Iterable[str], available: Iterable[str]) -> list[str]:
    """The capabilities in ``needs`` that are not ``available``, sorted."""
    return sorted(set(needs) - set(available))
