"""A backend that runs nothing: process, network and clock faults become state that an in-memory system reads.

:class:`MemoryBackend` hands a system a :class:`MemoryLayout` whose ``states`` (:class:`NodeStates`) record
which processes are down or paused and which links are cut; the fake system
(:mod:`harness.testing.fake`) consults them on every operation. It is a testing tool: the runtime, the
workers and the nemesis runner run unchanged over it, in milliseconds.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness import capabilities as caps
from harness.plugin_api import ProcessSpec
from harness.process_spec import as_bytes

if TYPE_CHECKING:
    from harness.config import TestConfig
    from harness.plugin_api import SystemPlugin


@dataclass
class NodeStates:
    """What faults did: processes down or paused, links cut (each an unordered pair), clock offsets."""

    down: set[str] = field(default_factory=set)
    paused: set[str] = field(default_factory=set)
    cut: set[frozenset[str]] = field(default_factory=set)
    offsets: dict[str, float] = field(default_factory=dict)
    starts: dict[str, int] = field(default_factory=dict)
    """How many times each process was started (again)."""


class MemoryLayout:
    """Addresses and paths for processes that never run: each gets ``memory:<name>`` and a port number."""

    backend = "memory"
    python = "python3"
    code_root = "."

    def __init__(self, run_dir: Path, states: NodeStates) -> None:
        self.dir = run_dir / "cluster"
        self.states = states
        self._ports = itertools.count(7000)

    def host(self, name: str) -> str:
        """``memory:<name>``."""
        return f"memory:{name}"

    def port(self, name: str, index: int = 0) -> int:
        """The next number."""
        return next(self._ports)

    def data_dir(self, name: str) -> str:
        """``cluster/data/<name>`` (nothing is written there)."""
        return str(self.dir / "data" / name)

    def shared_dir(self, key: str) -> str:
        """``cluster/shared/<key>``."""
        return str(self.dir / "shared" / key)

    def file(self, name: str) -> str:
        """``cluster/files/<name>``."""
        return str(self.dir / "files" / name)

    def write_file(self, name: str, data: bytes | str, mode: int = 0o600) -> None:
        """Nothing to write: no process reads it (bytes or text, as the real layouts take)."""
        as_bytes(data, f"write_file({name!r})")

    def log_path(self, name: str) -> Path:
        """``cluster/logs/<name>.log`` (never written)."""
        return self.dir / "logs" / f"{name}.log"


class MemoryBackend:
    """Processes, network and clock faults as recorded state; nothing is started, so nothing is left."""

    name = "memory"
    capabilities = frozenset({caps.PROCESSES, caps.NETWORK, caps.CLOCK})

    def __init__(self) -> None:
        self.processes = self
        self.network = self
        self.clock = self
        self.disk = self
        self.states = NodeStates()
        self.specs: dict[str, ProcessSpec] = {}
        self.torn_down = False

    def unavailable(self, capability: str) -> str | None:
        """Why the memory backend cannot do ``capability`` (disks and power losses: there are none)."""
        return None if capability in self.capabilities else f"the memory backend has no {capability}"

    async def setup(self, test: TestConfig, system: SystemPlugin, run_dir: Path,
                    needs: frozenset[str]) -> list[ProcessSpec]:
        """Lay the system out; every autostarted process counts as running."""
        specs = system.processes(test, MemoryLayout(run_dir, self.states))
        self.specs = {s.name: s for s in specs}
        self.states.down = {s.name for s in specs if not s.autostart}
        return specs

    async def teardown(self) -> None:
        """Mark everything stopped."""
        self.torn_down = True
        self.states.down = set(self.specs)

    def address(self, name: str) -> tuple[str, int]:
        """``memory:<name>`` and its port."""
        return f"memory:{name}", self.specs[name].port

    async def collect(self, run_dir: Path) -> None:
        """Nothing to collect."""

    # processes
    async def kill(self, name: str) -> None:
        """Mark the process down."""
        self.states.down.add(name)
        self.states.paused.discard(name)

    async def start(self, name: str, extra_args: Sequence[str] = ()) -> None:
        """Mark the process running again."""
        if name in self.states.down:
            self.states.down.discard(name)
            self.states.starts[name] = self.states.starts.get(name, 0) + 1

    async def pause(self, name: str) -> None:
        """Mark the process paused."""
        if name not in self.states.down:
            self.states.paused.add(name)

    async def resume(self, name: str) -> None:
        """Mark the process running."""
        self.states.paused.discard(name)

    def running(self, name: str) -> bool:
        """Not marked down."""
        return name not in self.states.down

    async def wait_exit(self, name: str, timeout: float) -> int | None:
        """A process here never exits on its own."""
        return None

    # network
    async def partition(self, grudge: Mapping[str, Sequence[str]]) -> None:
        """Record the cut links (replacing any partition)."""
        self.states.cut = {frozenset((a, b)) for a, others in grudge.items() for b in others if a != b}

    async def heal(self) -> None:
        """No link is cut."""
        self.states.cut = set()

    # clock
    async def set_offset(self, node: str, seconds: float) -> None:
        """Record the offset."""
        self.states.offsets[node] = seconds

    # disk: the memory backend has none
    async def erase(self, node: str) -> None:
        """Refused."""
        raise caps.CapabilityMissing("the memory backend has no disks")

    async def lose_unsynced(self, nodes: Sequence[str], tear: bool, rng: random.Random) -> dict[str, Any]:
        """Refused."""
        raise caps.CapabilityMissing("the memory backend has no disks")

    async def read_file(self, node: str, path: str) -> bytes | None:
        """No files."""
        return None

    async def edit(self, node: str, change: Callable[[Path], dict[str, Any]]) -> dict[str, Any]:
        """Refused."""
        raise caps.CapabilityMissing("the memory backend has no disks")
