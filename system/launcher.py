"""Start and stop a local cluster (master, nodes, operators, metadata store) as child processes on 127.0.0.N.

    with Cluster.start("/tmp/c1", nodes=3, tablets=4) as c:
        c.wait_ready()
        c.kill("n1"); c.restart("n1"); c.pause("op1"); c.resume("op1")

Node ``nK`` binds ``127.0.0.(K+1)``; operator ``opK`` binds ``127.0.0.(100+K)`` and calls nodes from that
address (so a partition can cut the control plane from a node while clients, on 127.0.0.1, still reach
it); the master binds 127.0.0.1. Every process gets a log
file under ``DIR/logs`` and a data directory under ``DIR/nodes/<id>``. ``DIR/cluster-secret.json``
(mode 0600) holds the cluster id and secret token made at creation; nodes join the master with it.
``DIR/cluster.json`` describes it all: addresses, UUIDs, tablets, the metadata URL and PIDs.

A wiped node (data directory deleted, relaunched with the same arguments) starts empty, so it takes a
new UUID and joins as a new member; the master retires its old identity and re-replicates.
:meth:`Cluster.stop` (also run on leaving the
``with`` block, and by :func:`stop_from_file` for a detached cluster) terminates and reaps every
process it started.
"""

from __future__ import annotations

import contextlib
import os
import random
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from system import statefile
from system.commands import master_argv, node_argv, operator_argv
from system.metadata.etcd_server import etcd_binary, start_etcd

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _port_free(host: str, port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def _ephemeral_range() -> tuple[int, int]:
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as fh:
            low, high = (int(x) for x in fh.read().split())
        return low, high
    except (OSError, ValueError):
        return 32768, 60999


# Ports already handed out by this process: two picks never coincide even before anything binds.
_PICKED: set[int] = set()


def pick_port(hosts: list[str]) -> int:
    """A port free on every one of ``hosts``, outside the kernel's ephemeral range and never handed out twice.

    Outgoing connections take their local ports from the ephemeral range, so a listening port picked there
    can be taken by a client socket between the pick and the server's bind.
    """
    low, high = _ephemeral_range()
    candidates = [p for p in range(20000, 45000) if not low <= p <= high] or list(range(20000, 45000))
    for _ in range(400):
        port = random.choice(candidates)
        if port not in _PICKED and all(_port_free(h, port) for h in hosts):
            _PICKED.add(port)
            return port
    raise RuntimeError("no free port found")


@dataclass
class Proc:
    """A child process the cluster manages."""

    name: str
    argv: list[str]
    log: str
    popen: subprocess.Popen[bytes] | None = None
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def pid(self) -> int | None:
        """The PID while running."""
        return self.popen.pid if self.popen is not None and self.popen.poll() is None else None


class Cluster:
    """A local cluster; create with :meth:`start`."""

    def __init__(self, directory: str, nodes: int, tablets: int, replication: int, metadata: str,
                 operators: int, bugs: tuple[str, ...], detach: bool, stall_timeout: float,
                 master: bool = True, dead_after: float = 10.0) -> None:
        self.dir = os.path.abspath(directory)
        self.n_nodes, self.tablets, self.replication = nodes, tablets, min(replication, nodes)
        self.metadata_kind = metadata
        self.bugs = bugs
        self.detach = detach
        self.stall_timeout = stall_timeout
        self.procs: dict[str, Proc] = {}
        self.etcd: subprocess.Popen[bytes] | None = None
        self.metadata_url = ""
        hosts = [f"127.0.0.{i + 2}" for i in range(nodes)] + ["127.0.0.1"]
        self.port = pick_port(hosts)
        self.node_addrs = {f"n{i + 1}": (f"127.0.0.{i + 2}", self.port) for i in range(nodes)}
        self.operator_addrs = {f"op{i + 1}": (f"127.0.0.{101 + i}", pick_port([f"127.0.0.{101 + i}"]))
                               for i in range(operators)}
        self.master_addr = ("127.0.0.1", pick_port(["127.0.0.1"])) if master else None
        self.dead_after = dead_after
        self.secret_path = os.path.join(self.dir, "cluster-secret.json")

    @classmethod
    def start(cls, directory: str, nodes: int = 3, tablets: int = 4, replication: int = 3,
              metadata: str = "sqlite", operators: int = 1, bugs: tuple[str, ...] = (), detach: bool = False,
              stall_timeout: float = 3.0, operator_args: tuple[str, ...] = (), master: bool = True,
              dead_after: float = 10.0) -> Cluster:
        """Start the metadata store, the master, the nodes and the operators; tear down if anything fails."""
        c = cls(directory, nodes, tablets, replication, metadata, operators, bugs, detach, stall_timeout, master,
                dead_after)
        try:
            c._start_all(operator_args)
        except BaseException:
            c.stop()
            raise
        return c

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["PYTHONPATH"] = REPO_ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        return env

    def _start_all(self, operator_args: tuple[str, ...]) -> None:
        os.makedirs(os.path.join(self.dir, "logs"), exist_ok=True)
        if self.metadata_kind == "etcd":
            if etcd_binary() is None:
                raise FileNotFoundError("etcd is not installed (apt-get install -y etcd-server)")
            cport = pick_port(["127.0.0.1"])
            self.etcd = start_etcd(os.path.join(self.dir, "etcd"), "127.0.0.1", cport, pick_port(["127.0.0.1"]),
                                   os.path.join(self.dir, "logs", "etcd.log"))
            self.metadata_url = f"etcd://127.0.0.1:{cport}"
        else:
            self.metadata_url = f"sqlite://{os.path.join(self.dir, 'metadata.db')}"
        self._write_secret()
        master = None
        if self.master_addr is not None:
            mh, mp = self.master_addr
            master_data = os.path.join(self.dir, "master")
            self.procs["master"] = Proc("master", master_argv(
                sys.executable, metadata=self.metadata_url, cluster_file=self.secret_path, host=mh, port=mp,
                data=master_data, replication=self.replication, dead_after=self.dead_after, bugs=self.bugs),
                os.path.join(self.dir, "logs", "master.log"), info={"data": master_data})
            master = self.master_addr
        for nid, (host, port) in self.node_addrs.items():
            data = os.path.join(self.dir, "nodes", nid)
            self.procs[nid] = Proc(nid, node_argv(sys.executable, node_id=nid, host=host, port=port, data=data,
                                                  master=master, cluster_file=self.secret_path, bugs=self.bugs),
                                   os.path.join(self.dir, "logs", f"{nid}.log"), info={"data": data})
        for oid, (host, port) in self.operator_addrs.items():
            self.procs[oid] = Proc(oid, operator_argv(
                sys.executable, operator_id=oid, metadata=self.metadata_url, nodes=self.node_addrs,
                tablets=self.tablets, replication=self.replication, host=host, port=port,
                data=os.path.join(self.dir, "operators"), stall_timeout=self.stall_timeout, bugs=self.bugs,
                extra=operator_args), os.path.join(self.dir, "logs", f"{oid}.log"))
        for name in self.procs:
            self.launch(name)
        self.write_description()

    def _write_secret(self) -> None:
        """Make the cluster id and secret token once, at creation (kept across restarts)."""
        if statefile.read_json(self.secret_path) is None:
            statefile.write_atomic(self.secret_path, {"cluster_id": f"fencepost-{secrets.token_hex(6)}",
                                                      "token": secrets.token_hex(16)})
            os.chmod(self.secret_path, 0o600)

    def secret(self) -> dict[str, str]:
        """The cluster id and token (for admin calls)."""
        return dict(statefile.read_json(self.secret_path) or {})

    def launch(self, name: str, extra_args: tuple[str, ...] = ()) -> None:
        """(Re)start process ``name`` with its usual arguments (plus ``extra_args`` this time only)."""
        p = self.procs[name]
        if p.pid is not None:
            raise RuntimeError(f"{name} is already running (pid {p.pid})")
        with open(p.log, "ab") as log:
            p.popen = subprocess.Popen([*p.argv, *extra_args], stdout=log, stderr=subprocess.STDOUT,
                                       cwd=REPO_ROOT, env=self._env(), start_new_session=self.detach)

    # --- faults -----------------------------------------------------------------------------------------

    def signal(self, name: str, sig: int) -> None:
        """Send ``sig`` to process ``name`` if it runs."""
        p = self.procs[name]
        if p.popen is not None and p.popen.poll() is None:
            p.popen.send_signal(sig)

    def kill(self, name: str, timeout: float = 10.0) -> None:
        """kill -9 and reap."""
        self.signal(name, signal.SIGKILL)
        self._reap(name, timeout)

    def terminate(self, name: str, timeout: float = 10.0) -> None:
        """SIGTERM (after SIGCONT), wait, and SIGKILL if it lingers."""
        self.signal(name, signal.SIGCONT)
        self.signal(name, signal.SIGTERM)
        self._reap(name, timeout)

    def restart(self, name: str, extra_args: tuple[str, ...] = ()) -> None:
        """Stop (SIGTERM) if running, then start again with the same data."""
        self.terminate(name)
        self.launch(name, extra_args)
        self.write_description()

    def pause(self, name: str) -> None:
        """SIGSTOP."""
        self.signal(name, signal.SIGSTOP)

    def resume(self, name: str) -> None:
        """SIGCONT."""
        self.signal(name, signal.SIGCONT)

    def _reap(self, name: str, timeout: float) -> None:
        p = self.procs[name]
        if p.popen is None:
            return
        try:
            p.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            p.popen.kill()
            p.popen.wait(10)

    def wipe_data(self, name: str) -> None:
        """Delete node ``name``'s data (stop it first): a new, empty disk."""
        shutil.rmtree(self.procs[name].info["data"], ignore_errors=True)

    def wait_exit(self, name: str, timeout: float = 30.0) -> int | None:
        """Wait for process ``name`` to exit on its own; its exit code, or None on timeout."""
        p = self.procs[name]
        assert p.popen is not None
        try:
            return p.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    # --- description and teardown ---------------------------------------------------------------------

    def node_uuid(self, name: str) -> str | None:
        """The UUID in the node's instance file, once it has written one."""
        inst = statefile.read_json(os.path.join(self.procs[name].info["data"], "instance.json"))
        return inst["uuid"] if inst else None

    def description(self) -> dict[str, Any]:
        """What ``cluster.json`` holds."""
        return {
            "dir": self.dir, "tablets": self.tablets, "replication": self.replication,
            "metadata": self.metadata_url, "bugs": list(self.bugs),
            "nodes": {n: {"host": h, "port": p, "uuid": self.node_uuid(n), "data": self.procs[n].info["data"],
                          "pid": self.procs[n].pid} for n, (h, p) in self.node_addrs.items()},
            "operators": {o: {"host": h, "port": p, "pid": self.procs[o].pid}
                          for o, (h, p) in self.operator_addrs.items()},
            "master": {"host": self.master_addr[0], "port": self.master_addr[1], "pid": self.procs["master"].pid,
                       "secret": self.secret_path} if self.master_addr is not None else None,
            "etcd": {"pid": self.etcd.pid} if self.etcd is not None else None,
        }

    def write_description(self) -> None:
        """Write ``cluster.json`` (waiting briefly for nodes to create their instance files)."""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(self.node_uuid(n) is None and self.procs[n].pid
                                                  for n in self.node_addrs):
            time.sleep(0.05)
        statefile.write_atomic(os.path.join(self.dir, "cluster.json"), self.description())

    def operators(self) -> list[tuple[str, int]]:
        """Operator addresses, for clients."""
        return list(self.operator_addrs.values())

    def routing(self) -> dict[str, Any] | None:
        """The routing table from the first operator that answers."""
        from system.admin import call_sync

        for host, port in self.operators():
            with contextlib.suppress(Exception):
                return dict(call_sync(host, port, "routing", {}, timeout=2.0))
        return None

    def wait_ready(self, timeout: float = 60.0) -> dict[str, Any]:
        """Wait until every tablet has a steady leader; return the routing table."""
        deadline = time.monotonic() + timeout
        last: dict[str, Any] | None = None
        while time.monotonic() < deadline:
            last = self.routing()
            if last and len(last["tablets"]) == self.tablets and all(
                    m["status"] == "steady" and m["leader"] for m in last["tablets"].values()):
                return last
            time.sleep(0.1)
        dead = self.exited()
        why = f"; {self.explain_exits(dead)}" if dead else ""
        raise TimeoutError(f"cluster not ready within {timeout}s: {last}{why}")

    def exited(self) -> dict[str, int]:
        """Processes that were launched and have exited since (killed ones included), with their exit codes."""
        return {name: code for name, p in self.procs.items()
                if p.popen is not None and (code := p.popen.poll()) is not None}

    def explain_exits(self, dead: dict[str, int]) -> str:
        """One line per exited process: its name, exit code and the last line of its log."""
        parts = []
        for name, code in sorted(dead.items()):
            try:
                with open(self.procs[name].log, errors="replace") as fh:
                    tail = [line.strip() for line in fh.read().splitlines() if line.strip()][-1:]
            except OSError:
                tail = []
            parts.append(f"{name} exited with {code}" + (f" ({tail[0]})" if tail else "")
                         + f", log {self.procs[name].log}")
        return "; ".join(parts)

    def stop(self) -> None:
        """Terminate and reap every process (SIGCONT, SIGTERM, then SIGKILL after 5 s)."""
        for p in self.procs.values():
            if p.popen is not None and p.popen.poll() is None:
                with contextlib.suppress(OSError):
                    p.popen.send_signal(signal.SIGCONT)
                    p.popen.send_signal(signal.SIGTERM)
        for p in self.procs.values():
            if p.popen is None:
                continue
            try:
                p.popen.wait(5)
            except subprocess.TimeoutExpired:
                p.popen.kill()
                p.popen.wait(10)
        if self.etcd is not None and self.etcd.poll() is None:
            self.etcd.terminate()
            try:
                self.etcd.wait(5)
            except subprocess.TimeoutExpired:
                self.etcd.kill()
                self.etcd.wait(10)

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def is_cluster_process(pid: int) -> bool:
    """Is ``pid`` alive and one of ours (a node, an operator or etcd), not a reused PID?"""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmd = f.read().replace(b"\0", b" ")
    except OSError:
        return False
    return b"system.node" in cmd or b"system.operator" in cmd or b"system.master" in cmd or b"etcd" in cmd


def stop_from_file(directory: str, timeout: float = 10.0) -> list[int]:
    """Stop a detached cluster described by ``DIR/cluster.json``; return the PIDs signalled."""
    desc = statefile.read_json(os.path.join(directory, "cluster.json"))
    if desc is None:
        raise FileNotFoundError(f"no cluster.json in {directory}")
    pids = [p["pid"] for p in [*desc["nodes"].values(), *desc["operators"].values(), desc.get("master") or {},
                               desc.get("etcd") or {}] if p.get("pid")]
    pids = [p for p in pids if is_cluster_process(p)]
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGCONT)
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(is_cluster_process(p) for p in pids):
        time.sleep(0.1)
    for pid in pids:
        if is_cluster_process(pid):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    return pids

