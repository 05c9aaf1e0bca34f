"""The nouns of a test, as typing.Protocols: Backend, Client, Workload and Nemesis.

Adding a backend, workload or fault means writing a new class that satisfies one of these, in a new
file; the runtime never changes. Each method's docstring is its whole contract. (Checker lives in
:mod:`harness.checker`, Model in :mod:`checkers.models`.)
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from harness.checker import Checker
from harness.config import TestConfig


@dataclass(frozen=True)
class Invocation:
    """What a worker asks its client to do: ``f`` on ``key`` with ``value``."""

    f: str
    key: Any = None
    value: Any = None


@dataclass(frozen=True)
class Outcome:
    """How an invocation ended: ``type`` is "ok", "fail" or "info"; ``value`` is the result."""

    type: str
    value: Any = None
    error: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


@runtime_checkable
class Backend(Protocol):
    """Runs the system under test somewhere (local processes, containers) and applies faults to it."""

    name: str

    async def setup(self, test: TestConfig, run_dir: Path) -> None:
        """Start every process of the cluster and wait until it serves."""
        ...

    async def teardown(self) -> None:
        """Stop everything and remove every fault, process, rule and mount. Safe to call twice."""
        ...

    def nodes(self) -> list[str]:
        """The data nodes' names, in a stable order."""
        ...

    def operators(self) -> list[str]:
        """The operator processes' names: the first is the active one, the rest are standbys."""
        ...

    def cluster_info(self) -> dict[str, Any]:
        """What a client needs to reach the cluster (addresses, tablets, routing)."""
        ...

    async def leaders(self) -> dict[int, str]:
        """Each tablet's current leader, as far as the control plane knows (tablets without one omitted)."""
        ...

    async def kill(self, node: str) -> None:
        """SIGKILL a process (a node, or "operator"/"master")."""
        ...

    async def start(self, node: str) -> None:
        """Start a killed process again, with its data."""
        ...

    async def pause(self, node: str) -> None:
        """Freeze a process (SIGSTOP)."""
        ...

    async def resume(self, node: str) -> None:
        """Thaw a paused process (SIGCONT)."""
        ...

    async def wipe(self, node: str) -> None:
        """Kill a node, delete its data directory, and start it again (amnesia)."""
        ...

    async def damage_wal(self, node: str, kind: str, rng: random.Random) -> dict[str, Any]:
        """Kill a node, damage one of its tablets' files, start it again; say what.

        ``kind`` is "truncate" or "bitflip" (the WAL: the node must refuse to serve that tablet) or
        "delete-metadata" (its consensus metadata: disk loss, so the node must refuse to start; it is then
        reformatted, as an administrator would, and rejoins under a new UUID)."""
        ...

    async def set_clock(self, node: str, offset: float) -> None:
        """Set a data node's wall clock to real time plus ``offset`` seconds (0 puts it back)."""
        ...

    async def lose_unsynced(self, nodes: Sequence[str], tear: bool, rng: random.Random) -> dict[str, Any]:
        """Power loss of ``nodes`` at once: kill -9 them, make their disks forget every change never fsynced
        (tearing each disk's last write if ``tear``), start them again; say what each lost."""
        ...

    async def partition(self, grudge: Mapping[str, Sequence[str]]) -> None:
        """Drop traffic so that each node in ``grudge`` cannot reach the nodes listed for it."""
        ...

    async def heal_network(self) -> None:
        """Remove every network fault."""
        ...

    async def collect(self, run_dir: Path) -> None:
        """Copy node logs, event logs and final state dumps into ``run_dir/nodes/<node>/``."""
        ...


@runtime_checkable
class Client(Protocol):
    """One worker's connection to the system (Jepsen's client). An exception in ``invoke`` is info."""

    async def open(self, backend: Backend) -> None:
        """Connect to the cluster."""
        ...

    async def invoke(self, op: Invocation) -> Outcome:
        """Perform one operation and say how it ended: ok, fail (definitely not applied) or info."""
        ...

    async def close(self) -> None:
        """Release connections."""
        ...


class OpSource(Protocol):
    """Hands out the next operation for a worker (the workload's generator)."""

    def next_op(self, worker: int) -> Invocation | None:
        """The next operation for ``worker``, or None when the worker has nothing more to do."""
        ...


@runtime_checkable
class Workload(Protocol):
    """A client, its operation generator, its final reads and the checkers that judge the history."""

    name: str

    def client(self) -> Client:
        """A fresh client for one worker."""
        ...

    def generator(self, rng: random.Random, concurrency: int) -> OpSource:
        """The operation source for the main phase, deterministic for a given ``rng``."""
        ...

    def final_ops(self) -> list[Invocation]:
        """Operations run after healing, to observe the final state (may be empty)."""
        ...

    def checkers(self) -> list[Checker]:
        """The checkers that judge this workload's history."""
        ...


@dataclass(frozen=True)
class FaultSpec:
    """One scheduled fault: which package, and how its targets are chosen (e.g. "minority")."""

    package: str
    target: str
    params: Mapping[str, Any] = field(default_factory=dict)


@runtime_checkable
class Nemesis(Protocol):
    """A fault package (Jepsen's combined nemesis): the fault, its choices, its heal step, its shading."""

    name: str
    color: str
    """The colour plots shade this fault's windows with."""

    def targets(self) -> Sequence[str]:
        """The target choices the schedule may draw from, e.g. ("one", "minority", "leader")."""
        ...

    async def start(self, backend: Backend, spec: FaultSpec, rng: random.Random) -> dict[str, Any]:
        """Begin the fault; return a JSON-ready description (resolved targets) for the history."""
        ...

    async def stop(self, backend: Backend) -> dict[str, Any]:
        """End the fault begun by the last ``start``; return a description."""
        ...

    async def heal(self, backend: Backend) -> None:
        """Undo anything this package may have left, whatever state it is in. Safe to call twice."""
        ...
