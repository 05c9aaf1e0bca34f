"""The running cluster as clients, faults and checkers see it: the :class:`ClusterView` protocol.

The plugin contract (:mod:`harness.plugin_api`, :mod:`harness.protocols`) is typed against this protocol,
not against :class:`harness.cluster.Cluster`, which implements it: a plugin needs nothing of the concrete
class, and the contract's modules import no module that runs a cluster.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from harness import capabilities as caps
    from harness.config import TestConfig
    from harness.process_spec import ProcessSpec


@runtime_checkable
class ClusterView(Protocol):
    """A system's cluster on a backend, for one test: who is in it, and the capabilities that act on it.

    A capability property (``processes``, ``network``, ``clock``, ``disk``, ``membership``) raises
    :class:`harness.capabilities.CapabilityMissing`, naming what is missing, when the run does not offer it.
    """

    @property
    def test(self) -> TestConfig:
        """The test's config."""
        ...

    @property
    def system(self) -> object:
        """The system plugin serving this run (one instance per run); test it with ``isinstance`` against the
        optional protocols of :mod:`harness.plugin_api`."""
        ...

    @property
    def backend(self) -> Any:
        """The backend that runs the processes (:class:`harness.backends.backend.Backend`)."""
        ...

    @property
    def specs(self) -> Mapping[str, ProcessSpec]:
        """Every process of the cluster by name, as the system described it."""
        ...

    def nodes(self) -> list[str]:
        """The data nodes' names, sorted: what faults target by default."""
        ...

    def members(self, role: str | None = None) -> list[str]:
        """The names of the processes with ``role`` (every process for None), sorted."""
        ...

    def address(self, name: str) -> tuple[str, int]:
        """Where process ``name`` serves: its host and port."""
        ...

    def has(self, capability: str) -> bool:
        """Whether this run offers ``capability``."""
        ...

    def require(self, capability: str) -> None:
        """Raise :class:`harness.capabilities.CapabilityMissing` unless this run offers ``capability``."""
        ...

    @property
    def processes(self) -> caps.Processes:
        """Kill, start, pause and resume processes."""
        ...

    @property
    def network(self) -> caps.Network:
        """Partition and heal; the cuts of overlapping fault windows compose."""
        ...

    @property
    def clock(self) -> caps.Clock:
        """Move wall clocks."""
        ...

    @property
    def disk(self) -> caps.Disk:
        """Erase, damage and power-lose data directories."""
        ...

    @property
    def membership(self) -> caps.Membership:
        """The system's membership State."""
        ...

    async def primaries(self) -> list[str]:
        """The nodes that lead now, the busiest first (the system's answer); [] when it cannot say."""
        ...

    async def wipe(self, node: str) -> list[str]:
        """Kill ``node``, give it an empty data directory, let the system prepare its return, and start it
        again; returns the extra start arguments the system asked for."""
        ...

    async def heal_everything(self, packages: Mapping[str, Any]) -> None:
        """Run every fault package's heal step, then heal the network (when the run has one)."""
        ...

    async def wait_ready(self, timeout: float) -> None:
        """Wait until the system says it serves (bounded by ``timeout``)."""
        ...

