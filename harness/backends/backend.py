"""Where processes run: the Backend protocol, the generic axis beside the system under test.

A backend runs any system's :class:`~harness.plugin_api.ProcessSpec` list (it hands the system a
:class:`~harness.plugin_api.Layout` of its own paths and addresses to build them from) and carries out
the capabilities that act on processes, links, clocks and disks. Adding a system never edits a
backend, and adding a backend never edits a system.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from harness.capabilities import Clock, Disk, Network, Processes

if TYPE_CHECKING:
    from harness.config import TestConfig
    from harness.plugin_api import SystemPlugin
    from harness.process_spec import ProcessSpec


@runtime_checkable
class Backend(Protocol):
    """Runs a cluster's processes somewhere (local processes, containers) and applies faults to them."""

    @property
    def name(self) -> str:
        """What ``--backend`` takes."""
        ...

    @property
    def capabilities(self) -> frozenset[str]:
        """What it can carry out here, among processes, network, clock, disk and power-loss."""
        ...

    @property
    def processes(self) -> Processes:
        """Kill, start, pause and resume its processes."""
        ...

    @property
    def network(self) -> Network:
        """Partition and heal."""
        ...

    @property
    def clock(self) -> Clock:
        """Move nodes' wall clocks."""
        ...

    @property
    def disk(self) -> Disk:
        """Erase, power-lose, read and edit data directories."""
        ...

    def unavailable(self, capability: str) -> str | None:
        """Why ``capability`` cannot be carried out here, in one line; None when it can."""
        ...

    async def setup(self, test: TestConfig, system: SystemPlugin, run_dir: Path,
                    needs: frozenset[str]) -> list[ProcessSpec]:
        """Lay out and start the system's processes (preparing what the ``needs`` capabilities take, such
        as libfaketime or the lazy filesystem) and wait until each accepts connections; return the specs."""
        ...

    async def teardown(self) -> None:
        """Stop everything and remove every fault, process, rule, mount, container and volume. Safe twice."""
        ...

    def address(self, name: str) -> tuple[str, int]:
        """Where process ``name`` serves, as the harness reaches it."""
        ...

    async def collect(self, run_dir: Path) -> None:
        """Copy each process's log and observation files into ``run_dir/nodes/<name>/``."""
        ...
