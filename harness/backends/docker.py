"""The docker backend: any system's processes as containers on a network of the test's own.

One container per process spec, from the node image (:mod:`harness.backends.image`: the system's code
on a base with python3, iptables and the system's own packages), on a bridge network ``fp-<run id>`` with
a /24 of its own (:mod:`harness.backends.docker_layout`). Every container has a fixed address there, kept across kills
and wipes; the harness reaches them at those addresses, which the host routes to on Linux, so no port
is published. Containers are started through testcontainers and waited for with its wait strategies.

Faults happen inside the containers: kill is ``docker kill`` then start, pause is ``docker pause``, an
erase removes a process's container and data volume so that its next start is on a fresh volume, and
partitions are iptables rules in each container's own network namespace (the containers hold
NET_ADMIN). Clock and power-loss faults need the local backend. Everything carries
``fencepost.run=<run id>`` and is removed by :meth:`DockerBackend.teardown`; a SIGKILLed harness's
leftovers are reaped by ``fencepost cluster down --all``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness import capabilities as caps
from harness.backends import docker_objects as objs
from harness.backends import observations
from harness.backends.docker_disk import edit_data, save_logs
from harness.backends.docker_layout import DockerLayout
from harness.plugin_api import SERVICE, HasCode, ImagePackages, ProcessSpec
from harness.process_spec import as_bytes

if TYPE_CHECKING:
    from harness.config import TestConfig
    from harness.plugin_api import SystemPlugin

log = logging.getLogger(__name__)
START_TIMEOUT_S = 60
UNSUPPORTED = {
    caps.CLOCK: "clock faults need the local backend (--backend local): the node image has no libfaketime",
    caps.POWER_LOSS: "power-loss faults need the local backend (--backend local): the docker backend does not "
                     "mount the lazy filesystem under container volumes",
}


class DockerBackend:
    """Run a system's processes in containers and inject faults inside them.

    The backend is its own Processes, Network and Disk capability (:mod:`harness.capabilities`).
    """

    name = "docker"

    def __init__(self, image: str | None = None) -> None:
        self.processes = self
        self.network = self
        self.clock = self
        self.disk = self
        self.image = image
        self.run_id = f"fp{secrets.token_hex(4)}"
        self.specs: dict[str, ProcessSpec] = {}
        self.containers: dict[str, Any] = {}  # name -> testcontainers DockerContainer
        self.layout: DockerLayout | None = None
        self._generation: dict[str, int] = {}
        self._seeded: set[str] = set()
        """The data volumes that have been given their process's spec ``files``."""
        self._pairs: set[tuple[str, str]] = set()
        self._client: Any = None
        self._network: Any = None
        self._run_dir: Path | None = None
        self._closing = False
        self._setup_task: asyncio.Future[list[ProcessSpec]] | None = None
        self._locks: dict[str, asyncio.Lock] = {}
        """Per process (:meth:`_lock_of`): held while a start checks and makes or starts its container, and
        while an erase or an edit acts on its container and volume (an edit cut in two by an erase wrote into
        a volume of the same name that Docker made anew, unlabelled, which the run's teardown then left
        behind); and while a pause, a resume or a change of its partition rules acts, since each of the last
        two runs ``docker exec`` in it, and an exec that a pause freezes half-started hangs the engine on that
        container for good (a heal's exec in a process while a pause froze it once blocked every later call
        on that process, its unpause too)."""

    # --- what it can do -----------------------------------------------------------------------------

    def unavailable(self, capability: str) -> str | None:
        """Why ``capability`` cannot be carried out in containers; None when it can."""
        if capability in UNSUPPORTED:
            return UNSUPPORTED[capability]
        if capability in (caps.PROCESSES, caps.NETWORK, caps.DISK):
            return None
        return f"the docker backend does not carry out {capability}"

    @property
    def capabilities(self) -> frozenset[str]:
        """Processes, network and disk."""
        return frozenset(c for c in caps.BACKEND_CAPABILITIES if self.unavailable(c) is None)

    # --- lifecycle ----------------------------------------------------------------------------------

    async def setup(self, test: TestConfig, system: SystemPlugin, run_dir: Path,
                    needs: frozenset[str]) -> list[ProcessSpec]:
        """Build the image if needed, create the network and volumes, start every container."""
        for capability in sorted(needs):
            if capability in UNSUPPORTED:
                raise caps.CapabilityMissing(UNSUPPORTED[capability])
        self._run_dir = run_dir
        (run_dir / "cluster" / "logs").mkdir(parents=True, exist_ok=True)
        (run_dir / "cleanup.json").write_text(json.dumps({"docker_run": self.run_id}) + "\n")
        self._setup_task = asyncio.ensure_future(asyncio.to_thread(self._setup_sync, test, system))
        return await asyncio.shield(self._setup_task)

    def _check_open(self) -> None:
        if self._closing:
            raise RuntimeError("the docker backend is being torn down")

    def _setup_sync(self, test: TestConfig, system: SystemPlugin) -> list[ProcessSpec]:
        import docker

        from harness.backends.image import ensure_image

        assert self._run_dir is not None
        code = system.code() if isinstance(system, HasCode) else {}
        packages = system.image_packages() if isinstance(system, ImagePackages) else ()
        self.image = self.image or ensure_image(code, say=lambda line: log.info("image: %s", line),
                                                packages=packages)
        self._check_open()
        self._client = docker.from_env(timeout=120)
        self._network, subnet = objs.create_network(self._client, f"fp-{self.run_id}", self.run_id)
        self.layout = DockerLayout(subnet, self._run_dir / "cluster")
        specs = system.processes(test, self.layout)
        self.specs = {s.name: s for s in specs}
        for key in sorted({k for s in specs for k in s.shared}):
            objs.create_volume(self._client, f"fp-{self.run_id}-shared-{key}", self.run_id)
        self._write_description()
        for spec in specs:  # services first, one by one: the others open them as they start
            if spec.role == SERVICE and spec.autostart:
                self._create_listening(spec.name)
        self._check_open()
        rest = [s.name for s in specs if s.role != SERVICE and s.autostart]
        if rest:
            with ThreadPoolExecutor(len(rest)) as pool:
                for future in [pool.submit(self._create_listening, name) for name in rest]:
                    future.result()
        self._write_description()
        return specs

    def _volume_for(self, name: str) -> str:
        return f"fp-{self.run_id}-{name}-data-{self._generation.get(name, 0)}"

    def _create(self, name: str, extra_args: Sequence[str] = ()) -> None:
        """Start the container for ``name`` through testcontainers and wait until it accepts connections."""
        from testcontainers.core.container import DockerContainer

        assert self.layout is not None
        spec = self.specs[name]
        container = (DockerContainer(str(self.image)).with_name(f"fp-{self.run_id}-{name}")
                     .with_command([*spec.argv, *extra_args]))
        volume = self._volume_for(name)
        if spec.data_dir:
            container.with_volume_mapping(objs.create_volume(self._client, volume, self.run_id), spec.data_dir, "rw")
            if volume not in self._seeded:  # a new volume: at setup, or after an erase
                for rel, data in spec.files.items():
                    container.with_copy_into_container(as_bytes(data, f"ProcessSpec.files[{rel!r}]"),
                                                      f"{spec.data_dir}/{rel}", 0o644)
        for key in spec.shared:
            container.with_volume_mapping(f"fp-{self.run_id}-shared-{key}", self.layout.shared_dir(key), "rw")
        for file, (data, mode) in self.layout.files.items():
            container.with_copy_into_container(data, self.layout.file(file), mode)
        for key, value in spec.env.items():
            container.with_env(key, value)
        net = self._network.name
        container.with_kwargs(  # one call: with_kwargs replaces what an earlier call set
            hostname=name, labels=objs.labels(self.run_id, **{"fencepost.name": name}), cap_add=["NET_ADMIN"],
            network=net, networking_config={net: self._client.api.create_endpoint_config(
                ipv4_address=self.layout.host(name), aliases=[name])})
        self.containers[name] = container
        container.start()
        self._seeded.add(volume)
        if spec.ready:
            self._wait_listening(name)  # a process that exits on its own is the caller's to see

    def _create_listening(self, name: str) -> None:
        """Create ``name``'s container at setup: a process that exits as it starts fails the setup, saying why."""
        self._create(name)
        if self._status(name) != "running":
            state = self._wrapped(name).attrs.get("State", {})
            tail = self._wrapped(name).logs(tail=3).decode(errors="replace").strip().replace("\n", " | ")
            raise RuntimeError(f"{name} exited with {state.get('ExitCode')} as it started: {tail[-300:]}")

    def _wait_listening(self, name: str, timeout: float | None = None) -> bool:
        """Wait until the process accepts a TCP connection on its address (checked from inside its container);
        False when the container stopped first (a process that exits on its own, as after disk loss).

        Raises:
            TimeoutError: it neither listened nor stopped within ``timeout`` seconds.
        """
        timeout = timeout or self.specs[name].start_timeout or START_TIMEOUT_S
        host, port = self.address(name)
        probe = ["python3", "-c", f"import socket; socket.create_connection(({host!r}, {port}), 1).close()"]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._check_open()
            if self._status(name) != "running":
                return False
            code, _ = self._wrapped(name).exec_run(probe)
            if code == 0:
                return True
            time.sleep(0.1)
        raise TimeoutError(f"{name} did not accept connections on {host}:{port} within {timeout:g} s")

    def _write_description(self) -> None:
        assert self._run_dir is not None
        desc = {"docker_run": self.run_id, "image": self.image, "network": f"fp-{self.run_id}",
                "processes": {n: {"ip": self.address(n)[0], "port": s.port, "argv": list(s.argv), "role": s.role}
                              for n, s in self.specs.items()}}
        (self._run_dir / "cluster" / "cluster.json").write_text(json.dumps(desc, indent=1) + "\n")

    async def teardown(self) -> None:
        """Remove every container, the network and the volumes of this run. Safe to call twice."""
        self._closing = True
        task = self._setup_task
        if task is not None:
            if not task.done():  # a cancelled setup's thread stops at its next step; wait for it
                await asyncio.wait([task], timeout=180)
            if task.done() and not task.cancelled():
                task.exception()  # retrieved, so it is not reported again when the task is collected
        await asyncio.to_thread(self._teardown_sync)

    def _teardown_sync(self) -> None:
        try:
            for container in self.containers.values():
                with contextlib.suppress(Exception):
                    container.stop()  # removes the container (force) and closes its client
            self.containers.clear()
            objs.reap(self.run_id)
        finally:
            if self._client is not None:
                self._client.close()
                self._client = None

    def address(self, name: str) -> tuple[str, int]:
        """The container's address on the run's network, and the port its spec serves on."""
        assert self.layout is not None, "the docker backend has not been set up"
        return self.layout.host(name), self.specs[name].port

    # --- processes ----------------------------------------------------------------------------------

    def _lock_of(self, name: str) -> asyncio.Lock:
        return self._locks.setdefault(name, asyncio.Lock())

    def _wrapped(self, name: str) -> Any:
        return self.containers[name].get_wrapped_container()

    def _status(self, name: str) -> str:
        if name not in self.containers:
            return "removed"
        wrapped = self._wrapped(name)
        wrapped.reload()
        return str(wrapped.status)

    async def kill(self, name: str) -> None:
        """docker kill (SIGKILL), and wait until the container has exited."""
        await asyncio.to_thread(self._kill_sync, name)

    def _kill_sync(self, name: str) -> None:
        import docker.errors

        if name not in self.containers:
            return
        wrapped = self._wrapped(name)
        if self._status(name) == "paused":  # older engines refuse to kill a paused container
            wrapped.unpause()
        with contextlib.suppress(docker.errors.APIError):  # already exited
            wrapped.kill()
        wrapped.wait(timeout=30)

    async def start(self, name: str, extra_args: Sequence[str] = ()) -> None:
        """Start a stopped container again with its data (a no-op if it runs) and restore its partition rules;
        with ``extra_args``, or after an erase, the container is made anew on the process's volume. Two starts
        of one process at once run one after the other, so the second finds it running."""
        async with self._lock_of(name):
            await asyncio.to_thread(self._start_sync, name, tuple(extra_args))

    def _start_sync(self, name: str, extra_args: tuple[str, ...]) -> None:
        status = self._status(name)
        if status in ("running", "paused"):
            return
        if status == "removed" or extra_args:
            self._remove_container(name)
            self._create(name, extra_args)
        else:
            self._wrapped(name).start()
            if self.specs[name].ready:
                self._wait_listening(name)  # a process that exits on its own is the caller's to see
        self._apply_rules(name)
        self._write_description()

    def _remove_container(self, name: str) -> None:
        container = self.containers.pop(name, None)
        if container is not None:
            save_logs(container, self.layout.log_path(name) if self.layout else Path(f"{name}.log"))
            container.stop()

    async def pause(self, name: str) -> None:
        """docker pause (the cgroup freezer), once no start or rule change of the container is under way."""
        async with self._lock_of(name):
            await asyncio.to_thread(lambda: self._status(name) == "running" and self._wrapped(name).pause())

    async def resume(self, name: str) -> None:
        """docker unpause, then bring its partition rules up to date."""
        async with self._lock_of(name):
            await asyncio.to_thread(self._resume_sync, name)

    def _resume_sync(self, name: str) -> None:
        if self._status(name) == "paused":
            self._wrapped(name).unpause()
            self._apply_rules(name)

    def running(self, name: str) -> bool:
        """Whether the container runs (a paused one runs)."""
        return self._status(name) in ("running", "paused")

    async def wait_exit(self, name: str, timeout: float) -> int | None:
        """The container's exit code once it exits on its own, or None after ``timeout``."""
        def wait() -> int | None:
            with contextlib.suppress(Exception):
                return int(self._wrapped(name).wait(timeout=timeout)["StatusCode"])
            return None

        return await asyncio.to_thread(wait)

    # --- network ------------------------------------------------------------------------------------

    async def partition(self, grudge: Mapping[str, Sequence[str]]) -> None:
        """Drop traffic between the grudge's process pairs with iptables inside each container."""
        self._pairs = ({(a, b) for a, others in grudge.items() for b in others}
                       | {(b, a) for a, others in grudge.items() for b in others})
        await asyncio.gather(*(self._rules(n) for n in self.specs))

    async def heal(self) -> None:
        """Flush every container's rules (a paused or stopped one gets its rules set when it comes back)."""
        self._pairs = set()
        await asyncio.gather(*(self._rules(n) for n in self.specs))

    async def _rules(self, name: str) -> None:
        async with self._lock_of(name):
            await asyncio.to_thread(self._apply_rules, name)

    def _apply_rules(self, name: str) -> None:
        """Make ``name``'s iptables rules match the current partition (only while it runs)."""
        if self.specs[name].role == SERVICE or self._status(name) != "running":
            return
        script = ["iptables -w -F INPUT", "iptables -w -F OUTPUT"]
        for peer in sorted(b for a, b in self._pairs if a == name):
            ip = self.address(peer)[0]
            script += [f"iptables -w -A INPUT -s {ip} -j DROP", f"iptables -w -A OUTPUT -d {ip} -j DROP"]
        code, out = self._wrapped(name).exec_run(["sh", "-c", " && ".join(script)])
        if code != 0:
            raise RuntimeError(f"iptables in {name} failed ({code}): {out.decode(errors='replace').strip()[:300]}")

    # --- clock and disk -----------------------------------------------------------------------------

    async def set_offset(self, node: str, seconds: float) -> None:
        """Refused: the node image has no libfaketime."""
        raise caps.CapabilityMissing(UNSUPPORTED[caps.CLOCK])

    async def lose_unsynced(self, nodes: Sequence[str], tear: bool, rng: random.Random) -> dict[str, Any]:
        """Refused: containers have no lazy filesystem under their volumes."""
        raise caps.CapabilityMissing(UNSUPPORTED[caps.POWER_LOSS])

    async def erase(self, node: str) -> None:
        """Remove the stopped node's container and data volume; its next start is on a new, empty volume.
        Its observation files are kept aside first (:mod:`harness.backends.observations`)."""
        def erase() -> None:
            spec = self.specs[node]
            for observed in spec.observations:  # what it saw outlives its volume
                data = (objs.read_file(self._wrapped(node), f"{spec.data_dir}/{observed}")
                        if spec.data_dir and node in self.containers else None)
                observations.keep(self._cluster_dir(), node, observed, data)
            self._remove_container(node)
            objs.remove_volume(self._client, self._volume_for(node))
            self._generation[node] = self._generation.get(node, 0) + 1

        async with self._lock_of(node):
            await asyncio.to_thread(erase)

    def _cluster_dir(self) -> Path:
        """The run's cluster directory on this machine (``RUN/cluster``)."""
        assert self._run_dir is not None, "the docker backend has not been set up"
        return self._run_dir / "cluster"

    async def read_file(self, node: str, path: str) -> bytes | None:
        """A file under the node's data directory, read through the Docker archive API, or None."""
        data_dir = self.specs[node].data_dir
        if not data_dir or node not in self.containers:
            return None
        return await asyncio.to_thread(objs.read_file, self._wrapped(node), f"{data_dir}/{path}")

    async def edit(self, node: str, change: Callable[[Path], dict[str, Any]]) -> dict[str, Any]:
        """Copy the stopped node's data directory out, run ``change`` on the copy, and put it back whole."""
        data_dir = self.specs[node].data_dir
        if not data_dir:
            raise ValueError(f"{node} has no data directory")
        async with self._lock_of(node):
            if node not in self.containers:
                raise ValueError(f"{node} has no container to edit: it was erased and not started again")
            return await asyncio.to_thread(edit_data, self._client, self._wrapped(node), str(self.image),
                                           data_dir, self._volume_for(node), self.run_id, change)

    # --- collection ---------------------------------------------------------------------------------

    async def collect(self, run_dir: Path) -> None:
        """Copy each container's output and observation files into ``run_dir/nodes/<name>/``."""
        await asyncio.to_thread(self._collect_sync, run_dir)

    def _collect_sync(self, run_dir: Path) -> None:
        import shutil

        assert self.layout is not None
        for name, spec in self.specs.items():
            dest = run_dir / "nodes" / name
            dest.mkdir(parents=True, exist_ok=True)
            log_path = self.layout.log_path(name)
            if name in self.containers:
                save_logs(self.containers[name], log_path)
            if log_path.exists():
                shutil.copy2(log_path, dest / log_path.name)
            for observed in spec.observations:
                data = (objs.read_file(self._wrapped(name), f"{spec.data_dir}/{observed}")
                        if spec.data_dir and name in self.containers else None)
                data = observations.whole(self._cluster_dir(), name, observed, data)
                if data is not None:
                    (dest / Path(observed).name).write_bytes(data)
