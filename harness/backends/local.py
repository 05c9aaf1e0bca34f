"""The local backend, the default: any system's processes as children of the harness on loopback addresses.

The run claims its own block of loopback addresses (:mod:`harness.backends.addresses`), and each
process gets its own address there, so partitions (iptables rules between those addresses, in a chain
the run owns) cut exactly the links they name and never another run's. Processes are signalled for
kill and pause, and where the machine has a writable cgroup v2 hierarchy their cgroups are killed and
frozen as well, which reaches children that left the process group (:mod:`harness.backends.cgroups`);
clock faults start nodes under libfaketime; power-loss faults put each node's data
directory on the lazy FUSE filesystem; a wipe deletes a data directory.

Everything the run starts is written to ``RUN/cleanup.json``, so ``fencepost cluster down --store DIR``
(:func:`harness.backends.reaper.reap_run_dir`) can reap what a killed harness left behind.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
import shutil
import signal
import socket
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness import capabilities as caps
from harness.backends import faketime, observations
from harness.backends.addresses import AddressBlock, claim_block
from harness.backends.cgroups import SETTLE_S, ProcessGroups, cgroup2_root
from harness.backends.iptables import Partitioner, reap_dead_chains
from harness.backends.iptables import why_unavailable as iptables_unavailable
from harness.backends.lazyfs.mount import LazyMount
from harness.backends.local_layout import LocalLayout, code_root_of
from harness.backends.reaper import harness_identity, reap_abandoned
from harness.backends.supervisor import Supervisor
from harness.plugin_api import NODE, SERVICE, HasCode, ProcessSpec
from harness.process_spec import as_bytes

if TYPE_CHECKING:
    from harness.config import TestConfig
    from harness.plugin_api import SystemPlugin

log = logging.getLogger(__name__)

READY_TIMEOUT_S = 60.0


def lazyfs_unavailable() -> str | None:
    """Why the lazy filesystem cannot be mounted here, in one line; None when it can."""
    if not os.path.exists("/dev/fuse"):
        return "power-loss faults need /dev/fuse (the lazy FUSE filesystem)"
    if shutil.which("fusermount3") is None and shutil.which("fusermount") is None:
        return "power-loss faults need fusermount3 (apt-get install -y fuse3)"
    return None


class LocalBackend:
    """Run a system's processes on this machine and inject faults into them.

    The backend is its own Processes, Network, Clock and Disk capability (:mod:`harness.capabilities`).
    """

    name = "local"

    def __init__(self) -> None:
        self.processes = self
        self.network = self
        self.clock = self
        self.disk = self
        self.supervisor = Supervisor()
        self.specs: dict[str, ProcessSpec] = {}
        self.layout: LocalLayout | None = None
        self._block: AddressBlock | None = None
        self._partitioner: Partitioner | None = None
        self.mounts: dict[str, LazyMount] = {}
        """Each node's lazy filesystem, when the run needs the power-loss capability."""
        self._run_dir: Path | None = None
        self._harness = harness_identity()
        """This harness process (pid and start time), recorded in cleanup.json for the next run's reaper."""
        self._collected_to: Path | None = None
        """Where :meth:`collect` copied the logs; teardown copies them again once the processes have stopped."""
        self._faketime = False
        self.groups: ProcessGroups | None = None
        """Each process's cgroup, where the machine has a writable cgroup v2 hierarchy."""
        self._starting: dict[str, asyncio.Lock] = {}
        """Per process: held while a start checks and launches it, so two faults starting one node at
        once launch it once (two faults once both launched one node, and the second copy died unable to
        bind its address)."""

    # --- what it can do -----------------------------------------------------------------------------

    def unavailable(self, capability: str) -> str | None:
        """Why ``capability`` cannot be carried out on this machine; None when it can."""
        if capability == caps.NETWORK:
            return iptables_unavailable()
        if capability == caps.CLOCK:
            return faketime.why_unavailable()
        if capability == caps.POWER_LOSS:
            return lazyfs_unavailable()
        if capability in (caps.PROCESSES, caps.DISK):
            return None
        return f"the local backend does not carry out {capability}"

    @property
    def capabilities(self) -> frozenset[str]:
        """What this machine allows, among processes, network, clock, disk and power-loss."""
        return frozenset(c for c in caps.BACKEND_CAPABILITIES if self.unavailable(c) is None)

    # --- lifecycle ----------------------------------------------------------------------------------

    async def setup(self, test: TestConfig, system: SystemPlugin, run_dir: Path,
                    needs: frozenset[str]) -> list[ProcessSpec]:
        """Lay out the system in the run's address block, start its processes and wait until they listen."""
        self._run_dir = run_dir
        await asyncio.to_thread(reap_dead_chains)  # a killed harness's partitions would cut this cluster too
        # What SIGKILLed harnesses left in this store (processes, lazy filesystems' mounts, cgroups): a run's
        # folder is STORE/<test name>/<time> (harness.store.RunStore).
        for line in await asyncio.to_thread(reap_abandoned, run_dir.parent.parent):
            log.warning("reaped a killed run's leftovers: %s", line)
        self._block = claim_block()
        root = cgroup2_root()
        self.groups = ProcessGroups(root, f"{run_dir.name.replace('.', '')}-{os.getpid()}") if root else None
        code_root = code_root_of(system.code()) if isinstance(system, HasCode) else None
        # Absolute: processes run in their code folder, not where the harness was started.
        self.layout = LocalLayout((run_dir / "cluster").resolve(), self._block, code_root)
        (self.layout.dir / "logs").mkdir(parents=True, exist_ok=True)
        specs = system.processes(test, self.layout)
        self.specs = {s.name: s for s in specs}
        self._faketime = caps.CLOCK in needs
        for spec in specs:
            self._register(spec, power_loss=caps.POWER_LOSS in needs)
        self._write_cleanup()
        if self._faketime:
            faketime.reset_all(self.layout.dir, [s.name for s in specs if s.role == NODE])
        await asyncio.to_thread(self._start_all, specs)
        return specs

    def _register(self, spec: ProcessSpec, *, power_loss: bool) -> None:
        assert self.layout is not None
        env = dict(os.environ)
        env["PYTHONPATH"] = self.layout.code_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        env.update(spec.env)
        if self._faketime and spec.role == NODE:
            env.update({k: v.format(dir=self.layout.dir, node=spec.name) for k, v in faketime.node_env().items()})
        argv = list(spec.argv)
        wrapper = self.groups.wrap(spec.name, []) if self.groups else []
        self.supervisor.add(spec.name, argv, self.layout.log_path(spec.name), env, self.layout.code_root, wrapper)
        if power_loss and spec.role == NODE and spec.data_dir:
            self.mounts[spec.name] = LazyMount(str(self.layout.dir / "storage" / spec.name), spec.data_dir,
                                               str(self.layout.dir / "logs" / f"{spec.name}-lazyfs.log"),
                                               passthrough=spec.observations, cached=spec.mmap)
        elif spec.data_dir:
            Path(spec.data_dir).mkdir(parents=True, exist_ok=True)

    @staticmethod
    def _write_missing_files(spec: ProcessSpec) -> None:
        """Write each of the spec's ``files`` that its data directory lacks, synced (power loss keeps it)."""
        if not spec.data_dir:
            return
        for rel, data in spec.files.items():
            path = Path(spec.data_dir) / rel
            if path.exists():
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "wb") as fh:
                fh.write(as_bytes(data, f"ProcessSpec.files[{rel!r}]"))
                fh.flush()
                os.fsync(fh.fileno())

    def _start_all(self, specs: Sequence[ProcessSpec]) -> None:
        """Start the services and wait for them, then every other autostarted process, then wait for those."""
        services = [s for s in specs if s.role == SERVICE and s.autostart]
        rest = [s for s in specs if s.role != SERVICE and s.autostart]
        for group in (services, rest):
            for spec in group:
                self._launch(spec.name)
            self._wait_listening([s for s in group if s.ready])

    def _launch(self, name: str, extra_args: Sequence[str] = ()) -> None:
        if name in self.mounts:
            self.mounts[name].start(dict(os.environ), os.getcwd(), detach=True)
        self._write_missing_files(self.specs[name])
        if self.groups is not None:  # a frozen cgroup (a paused process killed from outside) would freeze it
            self.groups.thaw(name)
        self.supervisor.launch(name, extra_args)
        self._write_cleanup()

    def _wait_listening(self, specs: Sequence[ProcessSpec], timeout: float = READY_TIMEOUT_S) -> None:
        timeout = max([timeout, *(s.start_timeout for s in specs if s.start_timeout)])
        deadline = time.monotonic() + timeout
        waiting = list(specs)
        while waiting:
            exited = {n: c for n, c in self.supervisor.exited().items() if n in {s.name for s in waiting}}
            if exited:
                raise RuntimeError(f"the cluster did not start: {self.supervisor.explain_exits(exited)}")
            waiting = [s for s in waiting if not _accepts(*self.address(s.name))]
            if waiting and time.monotonic() > deadline:
                names = ", ".join(s.name for s in waiting)
                raise TimeoutError(f"{names} did not accept connections within {timeout:g} s")
            if waiting:
                time.sleep(0.05)

    def _write_cleanup(self, torn_down: bool = False) -> None:
        assert self._run_dir is not None and self.layout is not None
        data = {"cluster_dir": str(self.layout.dir), "pids": self.supervisor.started(),
                "cgroups": str(self.groups.base) if self.groups else None,
                "iptables_chain": self._partitioner.chain if self._partitioner else None,
                "addresses": {n: list(self.address(n)) for n in self.specs},
                "discard": self._discarded(),
                "harness": self._harness, "torn_down": torn_down}
        tmp = self._run_dir / ".cleanup.json.tmp"
        tmp.write_text(json.dumps(data) + "\n")
        os.replace(tmp, self._run_dir / "cleanup.json")

    def _discarded(self) -> list[str]:
        """The data directories (and lazy disks' backing directories) removed when the run ends."""
        paths = []
        for name, spec in self.specs.items():
            if spec.discard_data and spec.data_dir:
                paths.append(spec.data_dir)
                if name in self.mounts:
                    paths.append(self.mounts[name].backing)
        return paths

    async def teardown(self) -> None:
        """Remove network rules, stop every process, unmount every disk, give the addresses back. Safe twice."""
        try:
            if self._partitioner is not None:
                await asyncio.to_thread(self._partitioner.remove)
        finally:
            if self.groups is not None:  # a frozen process takes no SIGTERM: stop paused ones as others
                await asyncio.to_thread(self.groups.thaw_all)
            await asyncio.to_thread(self.supervisor.stop_all)
            if self.groups is not None:  # children that left their process group, which no signal reached
                await asyncio.to_thread(self.groups.kill_all)
            if self._collected_to is not None:  # what the processes logged while stopping (a crash on SIGTERM)
                await asyncio.to_thread(self._copy_logs, self._collected_to)
            for mount in self.mounts.values():
                await asyncio.to_thread(mount.stop)
            for path in self._discarded():  # data the system asked not to keep (ProcessSpec.discard_data)
                await asyncio.to_thread(shutil.rmtree, path, True)
            if self._faketime:
                faketime.remove_leftovers(self.supervisor.all_pids())
            if self.groups is not None:
                await asyncio.to_thread(self.groups.remove)
            if self._run_dir is not None and self.layout is not None:
                self._write_cleanup(torn_down=True)
            if self._block is not None:
                self._block.release()

    def address(self, name: str) -> tuple[str, int]:
        """The process's host in the run's block, and the port its spec serves on."""
        assert self.layout is not None, "the local backend has not been set up"
        return self.layout.host(name), self.specs[name].port

    # --- processes ----------------------------------------------------------------------------------

    async def kill(self, name: str) -> None:
        """kill -9 and reap: the process's group, and (with cgroups) everything in its cgroup, its children
        that left its process group included, waiting until none is left (so a restart never meets a
        survivor of the old process).

        Raises:
            RuntimeError: processes were still in its cgroup after the wait.
        """
        await asyncio.to_thread(self._kill, name)

    def _kill(self, name: str) -> None:
        self.supervisor.signal(name, signal.SIGKILL)
        left = self.groups.kill(name) if self.groups is not None else []
        self.supervisor.kill(name)  # reap it
        if left:
            raise RuntimeError(f"{name}: process(es) {', '.join(map(str, left))} still in its cgroup "
                               f"{SETTLE_S:g} s after cgroup.kill")

    async def start(self, name: str, extra_args: Sequence[str] = ()) -> None:
        """Start a stopped process again with the same data (a no-op if it runs, or once a start of it
        that was under way has launched it)."""
        async with self._starting.setdefault(name, asyncio.Lock()):
            if not self.supervisor.running(name):
                await asyncio.to_thread(self._launch, name, extra_args)

    async def pause(self, name: str) -> None:
        """SIGSTOP the process's group and (with cgroups, while it runs) freeze its cgroup, so that its
        children that left the group stop too (PostgreSQL's backends each call ``setsid()``)."""
        self.supervisor.signal(name, signal.SIGSTOP)
        groups = self.groups
        if groups is not None and self.supervisor.running(name) and not await asyncio.to_thread(groups.freeze, name):
            log.warning("%s: its cgroup did not freeze within %g s; only its process group is stopped", name, SETTLE_S)

    async def resume(self, name: str) -> None:
        """Thaw the process's cgroup (with cgroups), then SIGCONT its group."""
        if self.groups is not None and not await asyncio.to_thread(self.groups.thaw, name):
            log.warning("%s: its cgroup did not thaw within %g s", name, SETTLE_S)
        self.supervisor.signal(name, signal.SIGCONT)

    def running(self, name: str) -> bool:
        """Whether the process runs."""
        return self.supervisor.running(name)

    async def wait_exit(self, name: str, timeout: float) -> int | None:
        """Its exit code once it exits on its own, or None after ``timeout``."""
        return await asyncio.to_thread(self.supervisor.wait_exit, name, timeout)

    # --- network ------------------------------------------------------------------------------------

    async def partition(self, grudge: Mapping[str, Sequence[str]]) -> None:
        """Drop traffic between the grudge's process pairs with iptables."""
        if self._partitioner is None:
            reason = iptables_unavailable()
            if reason is not None:
                raise caps.CapabilityMissing(reason)
            assert self._run_dir is not None and self.layout is not None
            tag = self._run_dir.name.replace(".", "")[-20:]
            groups = {n: self.groups.path(n) for n in self.specs} if self.groups else None
            self._partitioner = Partitioner(tag, {n: self.layout.host(n) for n in self.specs}, groups)
            await asyncio.to_thread(self._partitioner.install)
            self._write_cleanup()
        await asyncio.to_thread(self._partitioner.apply, grudge)

    async def heal(self) -> None:
        """Remove every partition rule."""
        if self._partitioner is not None:
            await asyncio.to_thread(self._partitioner.heal)

    # --- clock --------------------------------------------------------------------------------------

    async def set_offset(self, node: str, seconds: float) -> None:
        """Rewrite the node's libfaketime offset file; its next clock read sees it."""
        if not self._faketime:
            raise caps.CapabilityMissing("clock faults need the nodes started under libfaketime: name a clock fault")
        if self.specs[node].role != NODE:
            raise ValueError(f"{node} is not a data node")
        assert self.layout is not None
        await asyncio.to_thread(faketime.write_offset, faketime.clock_file(self.layout.dir, node), seconds)

    # --- disk ---------------------------------------------------------------------------------------

    def _data_dir(self, node: str) -> Path:
        data = self.specs[node].data_dir
        if not data:
            raise ValueError(f"{node} has no data directory")
        return Path(data)

    def _observed_file(self, node: str, observed: str) -> Path:
        """Where the node's observation file ``observed`` is on disk: under the lazy disk's backing directory
        when the node has one (observations are written straight through to it, and it stays readable when
        the filesystem process is gone), else under its data directory."""
        mount = self.mounts.get(node)
        return Path(mount.backing if mount is not None else self._data_dir(node)) / observed

    async def erase(self, node: str) -> None:
        """Delete a stopped node's data: a new, empty disk (lazy storage is unmounted and emptied). Its
        observation files are kept aside first (:mod:`harness.backends.observations`)."""
        assert self.layout is not None
        for observed in self.specs[node].observations:  # what it saw outlives its disk
            source = self._observed_file(node, observed)
            await asyncio.to_thread(observations.take, self.layout.dir, node, observed, source)
        mount = self.mounts.get(node)
        if mount is None:
            await asyncio.to_thread(shutil.rmtree, self._data_dir(node), True)
            self._data_dir(node).mkdir(parents=True, exist_ok=True)
            return
        await asyncio.to_thread(mount.stop)
        await asyncio.to_thread(shutil.rmtree, mount.backing, True)

    async def lose_unsynced(self, nodes: Sequence[str], tear: bool, rng: random.Random) -> dict[str, Any]:
        """kill -9 every node in ``nodes``, drop each one's unsynced changes, then start them all again."""
        missing = [n for n in nodes if n not in self.mounts]
        if missing:
            raise caps.CapabilityMissing(f"{', '.join(missing)} not on lazy storage: name a power-loss fault at setup")
        for node in nodes:
            await self.kill(node)
        lost: dict[str, Any] = {}
        try:
            for node in nodes:
                mount = self.mounts[node]
                out = await asyncio.to_thread(mount.drop, tear, rng.randrange(2**31))
                lost[node] = {"dropped_writes": out["dropped_writes"], "dropped_bytes": out["dropped_bytes"],
                              "undone_names": len(out["undone_names"]), "torn": out["torn"]}
                if mount.cached:  # the kernel may still hold pages of what was lost: a fresh mount holds none
                    await asyncio.to_thread(mount.stop)
        finally:
            for node in nodes:
                await self.start(node)
        return {"nodes": sorted(nodes), "lost": lost}

    async def read_file(self, node: str, path: str) -> bytes | None:
        """The bytes of ``path`` under the node's data directory, or None."""
        try:
            return await asyncio.to_thread((self._data_dir(node) / path).read_bytes)
        except (FileNotFoundError, NotADirectoryError):
            return None

    async def edit(self, node: str, change: Callable[[Path], dict[str, Any]]) -> dict[str, Any]:
        """Run ``change`` on the stopped node's data directory, in place."""
        return await asyncio.to_thread(change, self._data_dir(node))

    # --- collection ---------------------------------------------------------------------------------

    async def collect(self, run_dir: Path) -> None:
        """Copy each process's log and its observation files into ``run_dir/nodes/<name>/``; teardown copies
        the logs again once every process has stopped, so that a crash on SIGTERM is in them too."""
        await asyncio.to_thread(self._collect, run_dir)

    def _copy_logs(self, run_dir: Path) -> None:
        assert self.layout is not None
        for name in self.specs:
            dest = run_dir / "nodes" / name
            dest.mkdir(parents=True, exist_ok=True)
            log = self.layout.log_path(name)
            if log.exists():
                shutil.copy2(log, dest / log.name)

    def _collect(self, run_dir: Path) -> None:
        assert self.layout is not None
        self._copy_logs(run_dir)
        self._collected_to = run_dir
        for name, spec in self.specs.items():
            dest = run_dir / "nodes" / name
            for observed in spec.observations:
                source = self._observed_file(name, observed) if spec.data_dir else None
                current = source.read_bytes() if source is not None and source.is_file() else None
                data = observations.whole(self.layout.dir, name, observed, current)
                if data is not None:
                    (dest / Path(observed).name).write_bytes(data)


def _accepts(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False
