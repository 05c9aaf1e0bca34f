"""The docker backend: the cluster as containers on a network of the test's own, started through testcontainers.

One container per node, one for the master and one per operator, all from the node image
(:mod:`harness.backends.image`), on a bridge network ``fp-<run id>`` with a /24 of its own. Every
container has a fixed address there (kept across kills and wipes) and serves on port 7000; the harness
reaches them at those addresses, which the host routes to on Linux, so no port is published. The master
and operators share a ``meta`` volume (the SQLite metadata store); with ``extra={"metadata": "etcd"}`` an
etcd container holds the metadata instead. Each node has a data volume.

Faults happen inside the containers: kill is ``docker kill`` then start, pause is ``docker pause``, wipe
removes the node's container and volume and starts it again on a fresh volume, and partitions are
iptables rules in each node's own network namespace (the containers hold NET_ADMIN). Everything carries
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
import shutil
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.backends import docker_objects as objs
from harness.config import TestConfig
from nemesis.registry import needs
from system.admin import call, call_sync

log = logging.getLogger(__name__)
PORT = 7000
SECRET_PATH = "/cluster-secret.json"
SQLITE_URL = "sqlite:///meta/metadata.db"
ETCD_PORT = 2379
START_TIMEOUT_S = 60
CLOCK_UNSUPPORTED = "clock faults need the local backend (--backend local): the node image has no libfaketime"


@dataclass
class Spec:
    """How to (re)create one container: its name in the cluster, address, command and volumes."""

    name: str
    ip: str
    argv: list[str]
    volumes: dict[str, str]  # volume name -> mount point
    kind: str  # node, operator, master or etcd
    port: int = PORT


class DockerBackend:
    """Run the reference system in containers and inject faults inside them."""

    name = "docker"

    def __init__(self, image: str | None = None) -> None:
        self.image = image
        self.run_id = f"fp{secrets.token_hex(4)}"
        self.specs: dict[str, Spec] = {}
        self.containers: dict[str, Any] = {}  # name -> testcontainers DockerContainer
        self.uuids: dict[str, str | None] = {}
        self.tablets = 0
        self.replication = 0
        self._secret = {"cluster_id": f"fencepost-{secrets.token_hex(6)}", "token": secrets.token_hex(16)}
        self._generation: dict[str, int] = {}
        self._pairs: set[tuple[str, str]] = set()
        self._client: Any = None
        self._network: Any = None
        self._run_dir: Path | None = None
        self._closing = False
        self._setup_task: asyncio.Future[None] | None = None

    # --- lifecycle ----------------------------------------------------------------------------------

    async def setup(self, test: TestConfig, run_dir: Path) -> None:
        """Build the image if needed, create the network and volumes, start every container, wait for leaders."""
        if "faketime" in needs(test.nemesis):
            raise RuntimeError(CLOCK_UNSUPPORTED)
        self._run_dir = run_dir
        (run_dir / "cluster" / "logs").mkdir(parents=True, exist_ok=True)
        (run_dir / "cleanup.json").write_text(json.dumps({"docker_run": self.run_id}) + "\n")
        self._setup_task = asyncio.ensure_future(asyncio.to_thread(self._setup_sync, test))
        await asyncio.shield(self._setup_task)
        if "operator" in test.nemesis:
            await self.kill("op2")
        await asyncio.to_thread(self._wait_ready, START_TIMEOUT_S)

    def _check_open(self) -> None:
        if self._closing:
            raise RuntimeError("the docker backend is being torn down")

    def _setup_sync(self, test: TestConfig) -> None:
        import docker

        from harness.backends.image import ensure_image

        self.image = self.image or ensure_image(say=lambda line: log.info("image: %s", line))
        self._check_open()
        self._client = docker.from_env(timeout=120)
        self._network, subnet = objs.create_network(self._client, f"fp-{self.run_id}", self.run_id)
        hosts = list(subnet.hosts())
        self.tablets, self.replication = test.tablets, min(3, test.nodes)
        bug_args = [a for b in test.bug for a in ("--bug", b)]
        meta = objs.create_volume(self._client, f"fp-{self.run_id}-meta", self.run_id)
        meta_url = SQLITE_URL
        if test.extra.get("metadata", "sqlite") == "etcd":
            ip, url, peer = str(hosts[5]), f"http://{hosts[5]}:{ETCD_PORT}", f"http://{hosts[5]}:{ETCD_PORT + 1}"
            self.specs["etcd"] = Spec("etcd", ip, [
                "etcd", "--name", "fencepost", "--data-dir", "/meta/etcd", "--listen-client-urls", url,
                "--advertise-client-urls", url, "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
                "--initial-cluster", f"fencepost={peer}"], {meta: "/meta"}, "etcd", ETCD_PORT)
            meta_url = f"etcd://{ip}:{ETCD_PORT}"
        master_ip = str(hosts[1])
        self.specs["master"] = Spec("master", master_ip, [
            "python3", "-m", "system.master", "--metadata", meta_url, "--cluster-file", SECRET_PATH, "--host",
            master_ip, "--port", str(PORT), "--data", "/meta/master", "--replication", str(self.replication),
            "--dead-after", "10", *bug_args], {meta: "/meta"}, "master")
        nodes = {f"n{i + 1}": str(hosts[10 + i]) for i in range(test.nodes)}
        for name, ip in nodes.items():
            self.specs[name] = Spec(name, ip, [
                "python3", "-m", "system.node", "--id", name, "--host", ip, "--port", str(PORT), "--data", "/data",
                "--master", f"{master_ip}:{PORT}", "--cluster-file", SECRET_PATH, *bug_args], {}, "node")
        node_spec = ",".join(f"{n}={ip}:{PORT}" for n, ip in nodes.items())
        for i in range(2 if "operator" in test.nemesis else 1):
            ip = str(hosts[2 + i])
            self.specs[f"op{i + 1}"] = Spec(f"op{i + 1}", ip, [
                "python3", "-m", "system.operator", "--id", f"op{i + 1}", "--metadata", meta_url, "--nodes",
                node_spec, "--tablets", str(test.tablets), "--replication", str(self.replication), "--host", ip,
                "--port", str(PORT), "--data", "/meta/operators", "--stall-timeout", "3.0", *bug_args],
                {meta: "/meta"}, "operator")
        self._write_description()
        if "etcd" in self.specs:  # the master and operators open the metadata store as they start
            self._create("etcd")
        self._check_open()
        # The rest at once: nodes retry joining the master, and operators retry nodes, until they answer.
        rest = [n for n in self.specs if n != "etcd"]
        with ThreadPoolExecutor(len(rest)) as pool:
            for future in [pool.submit(self._create, name) for name in rest]:
                future.result()

    def _volume_for(self, name: str) -> str:
        return f"fp-{self.run_id}-{name}-data-{self._generation.get(name, 0)}"

    def _create(self, name: str) -> None:
        """Start the container for ``name`` through testcontainers and wait until it accepts connections."""
        from testcontainers.core.container import DockerContainer

        spec = self.specs[name]
        volumes = dict(spec.volumes)
        if spec.kind == "node":
            volumes[objs.create_volume(self._client, self._volume_for(name), self.run_id)] = "/data"
        container = DockerContainer(str(self.image)).with_name(f"fp-{self.run_id}-{name}").with_command(spec.argv)
        for volume, mount in volumes.items():
            container.with_volume_mapping(volume, mount, "rw")
        container.with_copy_into_container(json.dumps(self._secret).encode(), SECRET_PATH, 0o600)
        net = self._network.name
        container.with_kwargs(  # one call: with_kwargs replaces what an earlier call set
            hostname=name, labels=objs.labels(self.run_id, **{"fencepost.name": name}), cap_add=["NET_ADMIN"],
            network=net, networking_config={net: self._client.api.create_endpoint_config(
                ipv4_address=spec.ip, aliases=[name])})
        container.waiting_for(self._ready_strategy(spec))
        self.containers[name] = container
        container.start()
        if spec.kind == "node":
            self.uuids[name] = self._read_uuid(name)

    @staticmethod
    def _ready_strategy(spec: Spec) -> Any:
        """Ready means the process accepts a TCP connection on its address, checked from inside the container."""
        from testcontainers.core.wait_strategies import ExecWaitStrategy

        probe = f"import socket; socket.create_connection(({spec.ip!r}, {spec.port}), 1).close()"
        return (ExecWaitStrategy(["python3", "-c", probe]).with_poll_interval(0.1)
                .with_startup_timeout(START_TIMEOUT_S))

    def _read_uuid(self, name: str) -> str | None:
        raw = objs.read_file(self.containers[name].get_wrapped_container(), "/data/instance.json")
        return json.loads(raw).get("uuid") if raw else None

    def _write_description(self) -> None:
        assert self._run_dir is not None
        desc = {"docker_run": self.run_id, "image": self.image, "network": f"fp-{self.run_id}",
                "processes": {n: {"ip": s.ip, "port": s.port, "argv": s.argv, "kind": s.kind}
                              for n, s in self.specs.items()},
                "uuids": self.uuids}
        (self._run_dir / "cluster" / "cluster.json").write_text(json.dumps(desc, indent=1) + "\n")

    def _wait_ready(self, timeout: float) -> None:
        """Wait until every tablet has a steady leader (bounded by ``timeout``)."""
        deadline = time.monotonic() + timeout
        last: Any = None
        while time.monotonic() < deadline:
            self._check_open()
            for host, port in self.cluster_info()["operators"]:
                with contextlib.suppress(Exception):
                    last = call_sync(host, port, "routing", {}, timeout=2.0)
                    break
            if last and len(last["tablets"]) == self.tablets and all(
                    m["status"] == "steady" and m["leader"] for m in last["tablets"].values()):
                self._write_description()
                return
            time.sleep(0.2)
        raise TimeoutError(f"docker cluster not ready within {timeout}s: {last}")

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

    # --- the cluster --------------------------------------------------------------------------------

    def _require(self) -> None:
        if not self.specs:
            raise RuntimeError("the docker backend has not been set up")

    def nodes(self) -> list[str]:
        """Node names n1..nN."""
        self._require()
        return sorted(n for n, s in self.specs.items() if s.kind == "node")

    def operators(self) -> list[str]:
        """op1 (active), then any standby."""
        self._require()
        return sorted(n for n, s in self.specs.items() if s.kind == "operator")

    def cluster_info(self) -> dict[str, Any]:
        """Container addresses (reachable from the host), tablets, UUIDs, and the master with its token."""
        self._require()
        master = self.specs["master"]
        return {"operators": [(self.specs[o].ip, PORT) for o in self.operators()], "tablets": self.tablets,
                "nodes": {n: (self.specs[n].ip, PORT) for n in self.nodes()}, "uuids": dict(self.uuids),
                "replication": self.replication,
                "master": {"addr": (master.ip, PORT), "token": self._secret["token"]}}

    async def leaders(self) -> dict[int, str]:
        """Each tablet's leader, from the first operator that answers."""
        for host, port in self.cluster_info()["operators"]:
            with contextlib.suppress(Exception):
                routing = await call(host, port, "routing", {}, timeout=2.0)
                return {int(t): m["leader"] for t, m in routing["tablets"].items() if m.get("leader")}
        return {}

    # --- faults -------------------------------------------------------------------------------------

    def _status(self, name: str) -> str:
        wrapped = self.containers[name].get_wrapped_container()
        wrapped.reload()
        return str(wrapped.status)

    async def kill(self, node: str) -> None:
        """docker kill (SIGKILL), and wait until the container has exited."""
        await asyncio.to_thread(self._kill_sync, node)

    def _kill_sync(self, name: str) -> None:
        import docker.errors

        wrapped = self.containers[name].get_wrapped_container()
        if self._status(name) == "paused":  # older engines refuse to kill a paused container
            wrapped.unpause()
        with contextlib.suppress(docker.errors.APIError):  # already exited
            wrapped.kill()
        wrapped.wait(timeout=30)

    async def start(self, node: str) -> None:
        """Start a killed container again, with its data (a no-op if it runs), and restore its partition rules."""
        await asyncio.to_thread(self._start_sync, node)

    def _start_sync(self, name: str) -> None:
        if self._status(name) in ("running", "paused"):
            return
        container = self.containers[name]
        container.get_wrapped_container().start()
        self._ready_strategy(self.specs[name]).wait_until_ready(container)
        self._apply_rules(name)

    async def pause(self, node: str) -> None:
        """docker pause (the cgroup freezer)."""
        await asyncio.to_thread(self._pause_sync, node)

    def _pause_sync(self, name: str) -> None:
        if self._status(name) == "running":
            self.containers[name].get_wrapped_container().pause()

    async def resume(self, node: str) -> None:
        """docker unpause, then bring its partition rules up to date."""
        await asyncio.to_thread(self._resume_sync, node)

    def _resume_sync(self, name: str) -> None:
        if self._status(name) == "paused":
            self.containers[name].get_wrapped_container().unpause()
            self._apply_rules(name)

    async def wipe(self, node: str) -> None:
        """Remove the node's container and data volume, then start it again on a new, empty volume."""
        await asyncio.to_thread(self._wipe_sync, node)

    def _wipe_sync(self, name: str) -> None:
        self._save_logs(name)
        container = self.containers.pop(name)
        container.stop()
        objs.remove_volume(self._client, self._volume_for(name))
        self._generation[name] = self._generation.get(name, 0) + 1
        self._create(name)
        self._apply_rules(name)
        self._write_description()

    async def damage_wal(self, node: str, kind: str, rng: random.Random) -> dict[str, Any]:
        """docker kill, damage one tablet's files in the stopped container's volume, start it again."""
        from harness.backends.docker_damage import damage_container_wal, lose_metadata

        await self.kill(node)
        if kind == "delete-metadata":  # disk loss: the node must exit, and is then wiped
            return {"node": node, **await asyncio.to_thread(lose_metadata, self, node, rng)}
        try:
            wrapped = self.containers[node].get_wrapped_container()
            return {"node": node, **await asyncio.to_thread(damage_container_wal, wrapped, kind, rng)}
        finally:
            await self.start(node)

    async def set_clock(self, node: str, offset: float) -> None:
        """Refused: the node image has no libfaketime."""
        raise RuntimeError(CLOCK_UNSUPPORTED)

    async def lose_unsynced(self, nodes: Sequence[str], tear: bool, rng: random.Random) -> dict[str, Any]:
        """Refused: containers have no lazy filesystem under their data volumes."""
        raise RuntimeError("lose-unsynced needs the local backend (--backend local): the docker backend does"
                           " not mount the lazy filesystem under node volumes")

    async def partition(self, grudge: Mapping[str, Sequence[str]]) -> None:
        """Drop traffic between the grudge's node pairs with iptables inside each node's container."""
        self._pairs = ({(a, b) for a, others in grudge.items() for b in others}
                       | {(b, a) for a, others in grudge.items() for b in others})
        await asyncio.gather(*(asyncio.to_thread(self._apply_rules, n) for n in self.nodes()))

    async def heal_network(self) -> None:
        """Flush every container's rules (a paused or stopped one gets its rules set when it comes back)."""
        self._pairs = set()
        if self.specs:
            await asyncio.gather(*(asyncio.to_thread(self._apply_rules, n) for n in self.nodes()))

    def _apply_rules(self, name: str) -> None:
        """Make ``name``'s iptables rules match the current partition (only while it runs)."""
        if self.specs[name].kind != "node" or name not in self.containers or self._status(name) != "running":
            return
        peers = sorted(b for a, b in self._pairs if a == name)
        script = ["iptables -w -F INPUT", "iptables -w -F OUTPUT"]
        for peer in peers:
            ip = self.specs[peer].ip
            script += [f"iptables -w -A INPUT -s {ip} -j DROP", f"iptables -w -A OUTPUT -d {ip} -j DROP"]
        code, out = self.containers[name].get_wrapped_container().exec_run(["sh", "-c", " && ".join(script)])
        if code != 0:
            raise RuntimeError(f"iptables in {name} failed ({code}): {out.decode(errors='replace').strip()[:300]}")

    # --- collection ---------------------------------------------------------------------------------

    def _log_path(self, name: str) -> Path:
        assert self._run_dir is not None
        return self._run_dir / "cluster" / "logs" / f"{name}.log"

    def _save_logs(self, name: str) -> None:
        """Append the container's output to ``RUN/cluster/logs/<name>.log`` (before a wipe removes it)."""
        wrapped = self.containers[name].get_wrapped_container()
        with self._log_path(name).open("ab") as fh:
            fh.write(wrapped.logs(stdout=True, stderr=True))

    async def collect(self, run_dir: Path) -> None:
        """Copy each node's and operator's log and event log, and each node's state dump, into ``nodes/<name>/``."""
        await asyncio.to_thread(self._collect_files, run_dir)
        for name in self.nodes():
            host, port = self.specs[name].ip, PORT
            try:
                dump = await call(host, port, "dump", {}, to=self.uuids.get(name), timeout=5.0)
            except Exception as e:  # a node that is down has no dump; say why
                dump = {"error": f"{type(e).__name__}: {e}"}
            (run_dir / "nodes" / name / "dump.json").write_text(json.dumps(dump, default=str) + "\n")

    def _collect_files(self, run_dir: Path) -> None:
        for name in self.specs:
            self._save_logs(name)
        for name in [*self.nodes(), *self.operators()]:
            dest = run_dir / "nodes" / name
            dest.mkdir(parents=True, exist_ok=True)
            shutil.copy2(self._log_path(name), dest / f"{name}.log")
            path = "/data/events.jsonl" if self.specs[name].kind == "node" else f"/meta/operators/operator-{name}.jsonl"
            events = objs.read_file(self.containers[name].get_wrapped_container(), path)
            if events is not None:
                (dest / "events.jsonl").write_bytes(events)
