"""The reference system as a Fencepost plugin: its processes, clients, faults, checkers and seeded bugs.

Shaped as an outside plugin would be: the framework finds it through the ``fencepost.systems`` entry
point and never imports it. A cluster is a metadata store (SQLite in a shared folder, or an etcd
service with ``extra={"metadata": "etcd"}``), a master (a service: never faulted), the data nodes
``n1..nN`` and the operators ``op1`` (active) and, when a test races the control plane, a standby
``op2`` (control plane: partitions may cut it off). Their command lines come from
:mod:`system.commands`, the same ones the system's own launcher uses.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import shutil
import time
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import system
from fencepost import CONTROL, NODE, SERVICE, Bug, Layout, ProcessSpec, SystemOption
from fencepost import capabilities as caps
from fencepost_reference.info import cluster_info, node_uuid, operators
from fencepost_reference.settle import SETTLED_FILE, operator_status, settle
from system.admin import call
from system.commands import etcd_argv, master_argv, node_argv, operator_argv

if TYPE_CHECKING:
    from fencepost import Checker, Client, ClusterView, Nemesis, TestConfig, Workload

SECRET_FILE = "cluster-secret.json"
STALL_TIMEOUT_S = 3.0
DEAD_AFTER_S = 10.0
BEHIND_ENTRIES = 20
"""How far (in log entries) a live follower's commit index must trail its leader's to count as behind."""
MUTABLE_MODULES = ("rules.py", "replica.py", "leader.py", "cursor.py", "wal.py", "client.py", "operator/election.py",
                   "operator/reconfig.py", "operator/control.py", "operator/migration.py", "operator/shards.py")
"""The protocol modules of ``system/`` that mutation testing mutates (relative to the package)."""


TABLETS = SystemOption("tablets", 4, "number of shards (tablets), each a replicated log")
"""The store's one option: how many tablets a cluster has (``--option tablets=N``)."""


def tablets_of(test: TestConfig) -> int:
    """How many tablets ``test``'s cluster has (its option, else the default)."""
    return int(TABLETS.parse(test.options.get("tablets", TABLETS.default)))


class ReferencePlugin:
    """Fencepost's own replicated, sharded store (``system/``), with switchable injected bugs."""

    name = "reference"
    description = "Fencepost's reference store: Oxia replication, Kudu tablet copy, copyset migration, Scylla topology"
    workloads = ("register", "set", "log", "bank")
    capabilities = frozenset({caps.PROCESSES, caps.NETWORK, caps.CLOCK, caps.DISK, caps.POWER_LOSS,
                              caps.PRIMARIES, caps.MEMBERSHIP})
    roles = frozenset({NODE, CONTROL, SERVICE})
    """Data nodes, the operators (its control plane) and the master and metadata store (services)."""

    def __init__(self) -> None:
        self.shape: dict[str, Any] = {}
        """The run's tablets, replication and admin token (:func:`fencepost_reference.info.cluster_info`)."""
        self._membership: Any = None

    # --- processes ----------------------------------------------------------------------------------

    def options(self) -> tuple[SystemOption, ...]:
        """Its number of tablets."""
        return (TABLETS,)

    def code(self) -> Mapping[str, Path]:
        """The ``system`` package, run in place locally and copied into the docker image."""
        return {"system": Path(system.__file__).resolve().parent}

    def image_packages(self) -> tuple[str, ...]:
        """etcd, for the etcd metadata store (``extra={"metadata": "etcd"}``)."""
        return ("etcd-server",)

    def mutable_modules(self) -> list[Path]:
        """The protocol code ``fencepost mutate`` mutates: rules, replicas, leader, cursor, WAL, operator, client."""
        root = Path(system.__file__).resolve().parent
        return [root / m for m in MUTABLE_MODULES]

    def equivalent_mutants(self) -> Path:
        """The reviewed equivalent mutants, kept beside this adapter."""
        return Path(__file__).resolve().with_name("equivalent_mutants.toml")

    def processes(self, test: TestConfig, layout: Layout) -> list[ProcessSpec]:
        """The metadata store, the master, the nodes and the operators, in start order."""
        bugs = tuple(test.bug)
        replication = min(3, test.nodes)
        secret = {"cluster_id": f"fencepost-{secrets.token_hex(6)}", "token": secrets.token_hex(16)}
        layout.write_file(SECRET_FILE, json.dumps(secret).encode(), 0o600)
        self.shape = {"tablets": tablets_of(test), "replication": replication, "token": secret["token"]}
        specs: list[ProcessSpec] = []
        meta = layout.shared_dir("meta")
        metadata = f"sqlite://{meta}/metadata.db"
        if test.extra.get("metadata", "sqlite") == "etcd":
            if layout.backend == "local" and shutil.which("etcd") is None:
                raise FileNotFoundError("etcd is not installed (apt-get install -y etcd-server)")
            host, port = layout.host("etcd"), layout.port("etcd")
            specs.append(ProcessSpec("etcd", SERVICE, tuple(etcd_argv(
                "etcd", name="fencepost", data=layout.data_dir("etcd"), host=host, client_port=port,
                peer_port=layout.port("etcd", 1))), port, data_dir=layout.data_dir("etcd")))
            metadata = f"etcd://{host}:{port}"
        master = (layout.host("master"), layout.port("master"))
        specs.append(ProcessSpec("master", SERVICE, tuple(master_argv(
            layout.python, metadata=metadata, cluster_file=layout.file(SECRET_FILE), host=master[0], port=master[1],
            data=layout.data_dir("master"), replication=replication, dead_after=DEAD_AFTER_S, bugs=bugs)),
            master[1], data_dir=layout.data_dir("master"), shared=("meta",)))
        nodes = {f"n{i + 1}": (layout.host(f"n{i + 1}"), layout.port(f"n{i + 1}")) for i in range(test.nodes)}
        for name, (host, port) in nodes.items():
            specs.append(ProcessSpec(name, NODE, tuple(node_argv(
                layout.python, node_id=name, host=host, port=port, data=layout.data_dir(name), master=master,
                cluster_file=layout.file(SECRET_FILE), bugs=bugs)), port, data_dir=layout.data_dir(name),
                observations=("events.jsonl",)))
        standby = "operator" in test.nemesis  # a second operator, stopped until a race starts it
        for i in range(2 if standby else 1):
            name = f"op{i + 1}"
            host, port = layout.host(name), layout.port(name)
            specs.append(ProcessSpec(name, CONTROL, tuple(operator_argv(
                layout.python, operator_id=name, metadata=metadata, nodes=nodes, tablets=tablets_of(test),
                replication=replication, host=host, port=port, data=layout.data_dir(name),
                stall_timeout=STALL_TIMEOUT_S, bugs=bugs)), port, data_dir=layout.data_dir(name),
                autostart=i == 0, observations=(f"operator-{name}.jsonl",), shared=("meta",)))
        return specs

    async def routing(self, cluster: ClusterView) -> dict[str, Any] | None:
        """The routing table from the first operator that answers (None when none does)."""
        for host, port in cluster_info(cluster)["operators"]:
            with contextlib.suppress(Exception):
                return dict(await call(host, port, "routing", {}, timeout=2.0))
        return None

    async def ready(self, cluster: ClusterView, timeout: float) -> None:
        """Wait until every tablet has a steady leader."""
        deadline = time.monotonic() + timeout
        last: dict[str, Any] | None = None
        while time.monotonic() < deadline:
            last = await self.routing(cluster)
            if last and len(last["tablets"]) == self.shape["tablets"] and all(
                    m["status"] == "steady" and m["leader"] for m in last["tablets"].values()):
                return
            await asyncio.sleep(0.1)
        raise TimeoutError(f"cluster not ready within {timeout:g}s: {last}")

    def transitions(self) -> list[str]:
        """election (a tablet electing), reconfiguration (a tablet's ensemble changing), copy (a migration's
        new replica being copied), follower-behind (a live follower's commit index trails its leader's by
        more than :data:`BEHIND_ENTRIES`)."""
        return ["election", "reconfiguration", "copy", "follower-behind"]

    async def in_transition(self, cluster: ClusterView, kind: str) -> bool:
        """Whether some tablet is in the middle of ``kind`` now, as the operator sees it."""
        if kind == "election":
            routing = await self.routing(cluster)
            if not routing:
                return False
            return any(m["status"] != "steady" for m in routing["tablets"].values())
        status = await operator_status(cluster_info(cluster)["operators"], timeout=1.0)
        if not status:
            return False
        tablets = status["tablets"].values()
        if kind == "reconfiguration":
            return any(t.get("reconfig") or t.get("migration") for t in tablets)
        if kind == "copy":
            return any((t.get("migration") or {}).get("stage") == "pre_voter" for t in tablets)
        if kind == "follower-behind":
            return follower_behind(status)
        return False

    def default_settings(self) -> dict[str, Any]:
        """Four nodes: the faults that move a replica onto a spare node need one."""
        return {"nodes": 4}

    async def primaries(self, cluster: ClusterView) -> list[str]:
        """The nodes leading tablets, the one leading the most first."""
        routing = await self.routing(cluster)
        if not routing:
            return []
        leaders = Counter(m["leader"] for m in routing["tablets"].values() if m.get("leader"))
        return [node for node, _ in leaders.most_common()]

    # --- clients, checkers, faults, bugs ------------------------------------------------------------

    def client(self, workload: Workload, cluster: ClusterView) -> Client:
        """A client for one worker of ``workload``."""
        from fencepost_reference.client import BankClient, ReferenceClient, SetClient

        def addresses(c: ClusterView) -> list[tuple[str, int]]:
            return list(cluster_info(c)["operators"])

        if workload.name == "set":
            return SetClient(addresses)
        if workload.name == "bank":
            initial: Callable[[], Mapping[str, int]] = getattr(workload, "initial_balances", dict)
            return BankClient(addresses, initial())
        return ReferenceClient(addresses)

    def checkers(self, test: TestConfig) -> list[Checker]:
        """The white-box checkers, which read the nodes' event logs and state dumps."""
        from fencepost_reference.checkers import white_box_checkers

        return white_box_checkers()

    def faults(self) -> Mapping[str, Callable[[], Nemesis]]:
        """The fault packages aimed at the reference system's protocol windows."""
        from fencepost_reference.faults import FAULTS

        return FAULTS

    def bugs(self) -> Mapping[str, Bug]:
        """Every injectable bug with its recipe."""
        from fencepost_reference.recipes import bugs

        return bugs()

    def membership(self) -> Any:
        """The run's membership State (replica moves through the master)."""
        from fencepost_reference.membership import ReferenceMembership

        if self._membership is None:
            self._membership = ReferenceMembership()
        return self._membership

    # --- collection ---------------------------------------------------------------------------------

    async def collect(self, cluster: ClusterView, run_dir: Path) -> None:
        """Once the cluster has settled (or stopped trying: ``nodes/settled.json``), each node's state dump, and
        each operator's event log under the name the checkers read."""
        await settle(cluster_info(cluster)["operators"], self.shape["replication"],
                     run_dir / "nodes" / SETTLED_FILE)
        for name in operators(cluster):
            source = run_dir / "nodes" / name / f"operator-{name}.jsonl"
            if source.exists():
                source.replace(source.with_name("events.jsonl"))
        for name in cluster.nodes():
            host, port = cluster.address(name)
            try:
                dump = await call(host, port, "dump", {}, to=await node_uuid(cluster, name), timeout=5.0)
            except Exception as e:  # a node that is down has no dump; say why
                dump = {"error": f"{type(e).__name__}: {e}"}
            (run_dir / "nodes" / name / "dump.json").write_text(json.dumps(dump, default=str) + "\n")


def follower_behind(status: Mapping[str, Any]) -> bool:
    """Whether, in an operator's ``status``, some live follower of a steady tablet trails its leader's commit
    index by more than :data:`BEHIND_ENTRIES` entries."""
    commits: Mapping[str, Mapping[str, int | None]] = status.get("commits") or {}
    for t, meta in status["tablets"].items():
        leader = meta.get("leader")
        top = (commits.get(leader) or {}).get(t) if leader else None
        if meta.get("status") != "steady" or top is None:
            continue
        for node in meta.get("ensemble", []):
            behind = (commits.get(node) or {}).get(t)
            if node != leader and behind is not None and top - behind > BEHIND_ENTRIES:
                return True
    return False


def plugin() -> ReferencePlugin:
    """A fresh reference-system plugin (the ``fencepost.systems`` entry point)."""
    return ReferencePlugin()
