"""The running cluster as clients and faults see it: a system's processes on a backend, with capabilities.

A :class:`Cluster` joins three things: the test, the system plugin (which described the processes and
knows who leads) and the backend (which runs them and carries out process, network, clock and disk
faults). A fault reaches a capability through it (``cluster.processes.kill(name)``,
``cluster.network.partition(grudge)``), and gets :class:`~harness.capabilities.CapabilityMissing`, naming
what is missing, when the run does not offer it. Checking before the run
(:func:`harness.registry.refuse_unsupported`) makes that a one-line refusal instead.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness import capabilities as caps
from harness.capabilities import CapabilityMissing
from harness.plugin_api import NODE, HasMembership, ProcessSpec, Rejoins
from harness.shared_network import SharedNetwork

if TYPE_CHECKING:
    from harness.backends.backend import Backend
    from harness.config import TestConfig
    from harness.plugin_api import SystemPlugin


def offered(system: SystemPlugin, backend: Backend) -> frozenset[str]:
    """The capabilities a run of ``system`` on ``backend`` has: what the system offers, less what the
    backend cannot carry out here (primaries and membership come from the system alone)."""
    return frozenset(c for c in system.capabilities
                     if c not in caps.BACKEND_CAPABILITIES or c in backend.capabilities)


class Cluster:
    """A system's cluster on a backend, for one test.

    Args:
        test: the test's config.
        system: the system plugin (one instance per run: it may keep the run's state).
        backend: the backend that runs the processes.
    """

    def __init__(self, test: TestConfig, system: SystemPlugin, backend: Backend) -> None:
        self.test = test
        self.system = system
        self.backend = backend
        self.capabilities = offered(system, backend)
        self.specs: dict[str, ProcessSpec] = {}
        self._network: SharedNetwork | None = None
        self._wipes: dict[str, asyncio.Lock] = {}

    async def start(self, run_dir: Path, needs: frozenset[str] = frozenset(), ready_timeout: float = 60.0) -> None:
        """Have the backend start the system's processes under ``run_dir`` (prepared for the ``needs``
        capabilities), then wait until the system serves. On failure the caller still calls :meth:`stop`."""
        self.specs = {s.name: s for s in await self.backend.setup(self.test, self.system, run_dir, needs)}
        await self.wait_ready(ready_timeout)

    async def stop(self) -> None:
        """Tear everything down (safe to call twice, and after a failed :meth:`start`)."""
        await self.backend.teardown()

    # --- who is in it -------------------------------------------------------------------------------

    def nodes(self) -> list[str]:
        """The data nodes' names, sorted: what faults target by default."""
        return self.members(NODE)

    def members(self, role: str | None = None) -> list[str]:
        """The names of the processes with ``role`` (every process for None), sorted."""
        return sorted(n for n, s in self.specs.items() if role is None or s.role == role)

    def address(self, name: str) -> tuple[str, int]:
        """Where process ``name`` serves: its host and port."""
        return self.backend.address(name)

    # --- capabilities -------------------------------------------------------------------------------

    def has(self, capability: str) -> bool:
        """Whether this run offers ``capability``."""
        return capability in self.capabilities

    def require(self, capability: str) -> None:
        """Raise :class:`CapabilityMissing` unless this run offers ``capability``."""
        if capability not in self.capabilities:
            if capability in caps.BACKEND_CAPABILITIES and capability in self.system.capabilities:
                why = self.backend.unavailable(capability) or f"the {self.backend.name} backend cannot do it"
                raise CapabilityMissing(f"the {capability} capability is not available here: {why}")
            raise CapabilityMissing(f"system {self.system.name} does not offer the {capability} capability")

    @property
    def processes(self) -> caps.Processes:
        """Kill, start, pause and resume processes."""
        self.require(caps.PROCESSES)
        return self.backend.processes

    @property
    def network(self) -> caps.Network:
        """Partition and heal; the cuts of overlapping fault windows compose (:mod:`harness.shared_network`)."""
        self.require(caps.NETWORK)
        if self._network is None:
            self._network = SharedNetwork(self.backend.network)
        return self._network

    @property
    def clock(self) -> caps.Clock:
        """Move wall clocks."""
        self.require(caps.CLOCK)
        return self.backend.clock

    @property
    def disk(self) -> caps.Disk:
        """Erase, damage and power-lose data directories. A system that offers power loss but not disk faults
        (PostgreSQL: a wiped primary loses data by design) gets it for power losses alone: the faults that
        erase or damage a disk need the disk capability themselves, so none of them runs there."""
        self.require(caps.POWER_LOSS if caps.DISK not in self.capabilities and self.has(caps.POWER_LOSS)
                     else caps.DISK)
        return self.backend.disk

    async def primaries(self) -> list[str]:
        """The nodes that lead now, the busiest first (the system's answer); [] when it cannot say."""
        self.require(caps.PRIMARIES)
        if not isinstance(self.system, caps.Primaries):
            return []
        return list(await self.system.primaries(self))

    @property
    def membership(self) -> caps.Membership:
        """The system's membership State."""
        self.require(caps.MEMBERSHIP)
        if not isinstance(self.system, HasMembership):
            raise CapabilityMissing(f"system {self.system.name} declares membership but has no State")
        state: caps.Membership = self.system.membership()
        return state

    async def wipe(self, node: str) -> list[str]:
        """Kill ``node``, give it an empty data directory, let the system prepare its return (if it has a
        rejoin step), and start it again; returns the extra start arguments the system asked for.

        Two wipes of one node run one after the other. Faults in two lanes can wipe the same node at once
        (the membership fault's re-add and the wipe fault once both wiped one node): interleaved, the
        second erase unmounted and deleted the disk the first had just given the restarted node, and the
        run ended in an error reading its event log."""
        self.require(caps.DISK)
        async with self._wipes.setdefault(node, asyncio.Lock()):
            await self.processes.kill(node)
            await self.disk.erase(node)
            extra: list[str] = []
            if isinstance(self.system, Rejoins):
                extra = list(await self.system.rejoin(self, node))
            await self.processes.start(node, extra)
            return extra

    async def heal_everything(self, packages: Mapping[str, Any]) -> None:
        """Run every fault package's heal step, then heal the network (when the run has one)."""
        for package in packages.values():
            await package.heal(self)
        if self.has(caps.NETWORK):
            await self.network.heal()

    async def wait_ready(self, timeout: float) -> None:
        """Wait until the system says it serves (bounded by ``timeout``)."""
        await asyncio.wait_for(self.system.ready(self, timeout), timeout + 5)


@asynccontextmanager
async def running(test: TestConfig, system: SystemPlugin, backend: Backend, run_dir: Path,
                  needs: frozenset[str] = frozenset()) -> AsyncIterator[Cluster]:
    """A started, ready cluster of ``system`` on ``backend`` for the body of an ``async with``; torn down
    after it, however it ends. For tools and tests that need a cluster without a whole test run."""
    cluster = Cluster(test, system, backend)
    try:
        await cluster.start(run_dir, needs)
        yield cluster
    finally:
        await cluster.stop()
