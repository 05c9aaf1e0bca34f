"""The nouns of a test, as typing.Protocols: Client, Workload and Nemesis.

Adding a workload or fault means writing a new class that satisfies one of these, in a new file; the
runtime never changes. Each method's docstring is its whole contract. The rest of the seam lives
beside these: Checker in :mod:`harness.checker_protocol`, the system plugin in :mod:`harness.plugin_api`, the
capabilities faults need in :mod:`harness.capabilities`, and Backend in :mod:`harness.backends.backend`.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from harness.checker_protocol import Checker

if TYPE_CHECKING:
    from harness.cluster_view import ClusterView


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
class Client(Protocol):
    """One worker's connection to the system (Jepsen's client). An exception in ``invoke`` is info.

    The system under test makes its clients (:meth:`harness.plugin_api.SystemPlugin.client`); a workload
    only names the functions it invokes.
    """

    async def open(self, cluster: ClusterView) -> None:
        """Connect to the cluster."""
        ...

    async def invoke(self, op: Invocation) -> Outcome:
        """Perform one operation and say how it ended: ok, fail (definitely not applied) or info."""
        ...

    async def close(self) -> None:
        """Release connections."""
        ...


@runtime_checkable
class WorkerBound(Protocol):
    """A client that learns which worker it serves before it opens (optional).

    Jepsen binds each worker thread to one node: every client the worker opens, and every one it reopens
    after an indeterminate op, talks to that node. A client that implements ``bind`` can do the same.
    """

    def bind(self, worker: int) -> None:
        """This client serves ``worker``, an ``int`` from 0 to concurrency-1 (the worker's index, not its
        process number, so it stays the same when the worker reopens a client after an ``info``); called
        before each ``open``."""
        ...


class OpSource(Protocol):
    """Hands out the next operation for a worker (the workload's generator)."""

    def next_op(self, worker: int) -> Invocation | None:
        """The next operation for ``worker``, or None when the worker has nothing more to do."""
        ...


@runtime_checkable
class OutcomeObserver(Protocol):
    """An op source that also hears how each op ended (optional), to steer what it hands out next."""

    def observe(self, worker: int, op: Invocation, outcome: Outcome) -> None:
        """``worker``'s ``op`` ended with ``outcome``; called after the completion is recorded."""
        ...


@runtime_checkable
class Workload(Protocol):
    """An operation generator, its final reads and the checkers that judge the history: Jepsen's partial
    test, for which the system under test provides the client."""

    name: str
    functions: frozenset[str]
    """The functions its operations invoke (``read``, ``write``, ``cas``): what a system's client must do."""

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
    needs: frozenset[str]
    """The capabilities it needs (:data:`harness.capabilities.CAPABILITIES`), checked before a test starts."""

    def targets(self) -> Sequence[str]:
        """The target choices the schedule may draw from, e.g. ("one", "minority", "leader")."""
        ...

    async def start(self, cluster: ClusterView, spec: FaultSpec, rng: random.Random) -> dict[str, Any]:
        """Begin the fault; return a JSON-ready description (resolved targets) for the history."""
        ...

    async def stop(self, cluster: ClusterView) -> dict[str, Any]:
        """End the fault begun by the last ``start``; return a description."""
        ...

    async def heal(self, cluster: ClusterView) -> None:
        """Undo anything this package may have left, whatever state it is in. Safe to call twice."""
        ...
