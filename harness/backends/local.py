"""The local backend, the embedded default: the cluster as child processes on 127.0.0.N.

Nodes, operators and the metadata store run through :mod:`system.launcher`, each with its own
loopback address and data directory under ``RUN/cluster``. Process faults are signals; network faults
are iptables rules on those addresses (root only: without it, partitions are refused with a clear
reason and the other faults still run); a wipe deletes a node's data directory.

Everything the run starts is written to ``RUN/cluster/cluster.json`` and ``RUN/cleanup.json``, so
``fencepost cluster down --store DIR`` can reap what a killed harness left behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import shutil
import signal
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.backends import faketime
from harness.backends.iptables import Partitioner, reap_dead_chains, why_unavailable
from harness.config import TestConfig
from nemesis.registry import needs
from system.admin import call
from system.launcher import Cluster
from system.node import EXIT_DISK_LOSS


class NetworkFaultsUnavailable(RuntimeError):
    """Partitions were asked for where iptables cannot be used."""


class LocalBackend:
    """Run the reference system as local processes and inject faults into them."""

    name = "local"

    def __init__(self) -> None:
        self.cluster: Cluster | None = None
        self._partitioner: Partitioner | None = None
        self._run_dir: Path | None = None
        self._faketime = False
        self._faketime_pids: set[int] = set()  # node processes started under libfaketime, for its /dev/shm litter

    async def setup(self, test: TestConfig, run_dir: Path) -> None:
        """Start the cluster under ``run_dir/cluster`` and wait until every tablet has a leader."""
        self._run_dir = run_dir
        await asyncio.to_thread(reap_dead_chains)  # a killed harness's partitions would cut this cluster too
        directory = run_dir / "cluster"
        standby = "operator" in test.nemesis  # a second operator, stopped until a race starts it
        node_env: dict[str, str] = {}
        if "faketime" in needs(test.nemesis):  # clock faults: every node reads its own offset file
            node_env = faketime.node_env()  # a missing offset file reads as real time
            self._faketime = True
        self.cluster = await asyncio.to_thread(
            Cluster.start, str(directory), nodes=test.nodes, tablets=test.tablets,
            replication=min(3, test.nodes), bugs=tuple(test.bug), operators=2 if standby else 1,
            node_env=node_env, storage="lazy" if "lazyfs" in needs(test.nemesis) else "plain",
        )
        self._write_cleanup()
        if self._faketime:
            await asyncio.to_thread(faketime.reset_all, self.cluster.dir, self.nodes())
            self._note_pids()
        if standby:
            await asyncio.to_thread(self.cluster.kill, "op2")
        await asyncio.to_thread(self.cluster.wait_ready, 60.0)

    def _write_cleanup(self) -> None:
        assert self._run_dir is not None and self.cluster is not None
        data = {"cluster_dir": self.cluster.dir,
                "iptables_chain": self._partitioner.chain if self._partitioner else None}
        (self._run_dir / "cleanup.json").write_text(json.dumps(data) + "\n")

    def _require(self) -> Cluster:
        if self.cluster is None:
            raise RuntimeError("the local backend has not been set up")
        return self.cluster

    async def teardown(self) -> None:
        """Remove network rules and stop every process. Safe to call twice."""
        try:
            if self._partitioner is not None:
                await asyncio.to_thread(self._partitioner.remove)
        finally:
            if self.cluster is not None:
                await asyncio.to_thread(self.cluster.stop)
            faketime.remove_leftovers(self._faketime_pids)

    def nodes(self) -> list[str]:
        """Node names n1..nN."""
        return sorted(self._require().node_addrs)

    def operators(self) -> list[str]:
        """op1 (active), then any standby."""
        return sorted(self._require().operator_addrs)

    def cluster_info(self) -> dict[str, Any]:
        """Operator addresses (for clients) and the cluster description."""
        c = self._require()
        return {"operators": c.operators(), "tablets": c.tablets, "nodes": dict(c.node_addrs),
                "uuids": {n: c.node_uuid(n) for n in c.node_addrs}, "replication": c.replication,
                "master": {"addr": c.master_addr, "token": c.secret().get("token")} if c.master_addr else None}

    async def leaders(self) -> dict[int, str]:
        """Each tablet's leader, from the first operator that answers."""
        for host, port in self._require().operators():
            with contextlib.suppress(Exception):
                routing = await call(host, port, "routing", {}, timeout=2.0)
                return {int(t): m["leader"] for t, m in routing["tablets"].items() if m.get("leader")}
        return {}

    async def kill(self, node: str) -> None:
        """kill -9 a process and reap it."""
        await asyncio.to_thread(self._require().kill, node)

    async def start(self, node: str) -> None:
        """Start a killed process again with the same data (a no-op if it runs)."""
        c = self._require()
        if c.procs[node].pid is None:
            await asyncio.to_thread(self._launch, node)

    def _launch(self, name: str, extra_args: tuple[str, ...] = ()) -> None:
        """Start a process and record its new PID in cluster.json, for the reaper."""
        c = self._require()
        c.launch(name, extra_args)
        c.write_description()
        self._note_pids()

    def _note_pids(self) -> None:
        if self._faketime and self.cluster is not None:
            self._faketime_pids |= {p.pid for n, p in self.cluster.procs.items()
                                    if n in self.cluster.node_addrs and p.pid is not None}

    async def pause(self, node: str) -> None:
        """SIGSTOP."""
        self._require().pause(node)

    async def resume(self, node: str) -> None:
        """SIGCONT."""
        self._require().resume(node)

    async def wipe(self, node: str) -> None:
        """kill -9, delete the node's data directory, start it again."""
        c = self._require()
        await asyncio.to_thread(c.kill, node)
        await asyncio.to_thread(c.wipe_data, node)  # on lazy storage: a new, empty disk
        await asyncio.to_thread(self._launch, node)

    async def damage_wal(self, node: str, kind: str, rng: random.Random) -> dict[str, Any]:
        """kill -9, damage one tablet's files in place, start the node again.

        Lost consensus metadata is disk loss: the node must exit (code 3) instead of serving; it is then
        started with ``--reformat``, as an administrator would, and rejoins under a new UUID."""
        from harness.backends.file_damage import damage_tablet

        c = self._require()
        old_uuid = c.node_uuid(node)
        await asyncio.to_thread(c.kill, node)
        try:
            done: dict[str, Any] = {"node": node, **await asyncio.to_thread(
                damage_tablet, Path(c.procs[node].info["data"]), kind, rng)}
        finally:
            await asyncio.to_thread(self._launch, node)
        if kind == "delete-metadata" and done["file"] is not None:
            done["exit"] = await asyncio.to_thread(c.wait_exit, node, 30.0)  # None: it is serving
            if done["exit"] == EXIT_DISK_LOSS:
                await asyncio.to_thread(self._launch, node, ("--reformat",))
                for _ in range(100):  # the reformatted node writes its new identity as it starts
                    if c.node_uuid(node) not in (None, old_uuid):
                        break
                    await asyncio.sleep(0.1)
                done |= {"reformatted": [node], "old_uuids": {node: old_uuid}, "new_uuids": {node: c.node_uuid(node)}}
            elif done["exit"] is not None:
                await asyncio.to_thread(self._launch, node)
        return done

    async def lose_unsynced(self, nodes: Sequence[str], tear: bool, rng: random.Random) -> dict[str, Any]:
        """kill -9 every node in ``nodes``, then drop each one's unsynced changes, then start them all again."""
        c = self._require()
        if c.storage != "lazy":
            raise RuntimeError("lose-unsynced needs lazy storage: name the lose-unsynced nemesis at setup")
        for node in nodes:
            await asyncio.to_thread(c.kill, node)
        lost: dict[str, Any] = {}
        try:
            for node in nodes:
                out = await asyncio.to_thread(c.drop_unsynced, node, tear, rng.randrange(2**31))
                lost[node] = {"dropped_writes": out["dropped_writes"], "dropped_bytes": out["dropped_bytes"],
                              "undone_names": len(out["undone_names"]), "torn": out["torn"]}
        finally:
            for node in nodes:
                await asyncio.to_thread(self._launch, node)
        return {"nodes": sorted(nodes), "lost": lost}

    async def set_clock(self, node: str, offset: float) -> None:
        """Rewrite the node's libfaketime offset file; the node's next clock read sees it."""
        if not self._faketime:
            raise RuntimeError("clock faults need the nodes started under libfaketime: name a clock nemesis")
        c = self._require()
        if node not in c.node_addrs:
            raise ValueError(f"no data node {node!r}")
        await asyncio.to_thread(faketime.write_offset, faketime.clock_file(c.dir, node), offset)

    async def partition(self, grudge: Mapping[str, Sequence[str]]) -> None:
        """Drop traffic between the grudge's node pairs with iptables."""
        if self._partitioner is None:
            reason = why_unavailable()
            if reason is not None:
                raise NetworkFaultsUnavailable(reason)
            c = self._require()
            tag = Path(c.dir).parent.name.replace(".", "")[-20:]
            hosts = {n: h for n, (h, _) in [*c.node_addrs.items(), *c.operator_addrs.items()]}
            self._partitioner = Partitioner(tag, hosts)
            await asyncio.to_thread(self._partitioner.install)
            self._write_cleanup()
        await asyncio.to_thread(self._partitioner.apply, grudge)

    async def heal_network(self) -> None:
        """Remove every partition rule."""
        if self._partitioner is not None:
            await asyncio.to_thread(self._partitioner.heal)

    async def collect(self, run_dir: Path) -> None:
        """Copy each node's log and event log, and its state dump, into ``run_dir/nodes/<node>/``."""
        c = self._require()
        for name in [*c.node_addrs, *c.operator_addrs]:
            dest = run_dir / "nodes" / name
            dest.mkdir(parents=True, exist_ok=True)
            log = Path(c.procs[name].log)
            if log.exists():
                shutil.copy2(log, dest / log.name)
            data = c.procs[name].info.get("data")
            events = Path(data) / "events.jsonl" if data else None
            if events is None:  # an operator: its event log sits in the shared operators folder
                events = Path(c.dir) / "operators" / f"operator-{name}.jsonl"
            if events.exists():
                shutil.copy2(events, dest / "events.jsonl")
        for name, (host, port) in c.node_addrs.items():
            uuid = c.node_uuid(name)
            try:
                dump = await call(host, port, "dump", {}, to=uuid, timeout=5.0)
            except Exception as e:  # a node that is down has no dump; say why
                dump = {"error": f"{type(e).__name__}: {e}"}
            (run_dir / "nodes" / name / "dump.json").write_text(json.dumps(dump, default=str) + "\n")


def _pids_mentioning(text: str) -> list[int]:
    """PIDs of system processes (node, operator, master, etcd) whose command line contains ``text``."""
    needle = text.encode()
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                cmd = fh.read()
        except OSError:
            continue
        if needle in cmd and (b"system." in cmd or b"etcd" in cmd):
            pids.append(int(entry))
    return pids


def reap_run_dir(run_dir: Path) -> list[str]:
    """Stop processes and remove iptables chains that a killed run under ``run_dir`` left; say what was done.

    Processes are found both from cluster.json and by their command line naming the run's cluster
    directory, so a node restarted after the description was written is found too.
    """
    from harness.backends.iptables import delete_chain
    from system.launcher import stop_from_file

    done: list[str] = []
    cleanup = run_dir / "cleanup.json"
    if not cleanup.exists():
        return done
    data = json.loads(cleanup.read_text())
    cluster_dir = data.get("cluster_dir")
    if cluster_dir:
        pids: list[int] = []
        if os.path.exists(os.path.join(cluster_dir, "cluster.json")):
            pids = stop_from_file(cluster_dir, timeout=5.0)
        strays = _pids_mentioning(cluster_dir)
        for pid in strays:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        if pids or strays:
            done.append(f"stopped {len(set(pids) | set(strays))} process(es) of {run_dir}")
        faketime.remove_leftovers(set(pids) | set(strays))  # SIGKILLed nodes under libfaketime left these
    chain = data.get("iptables_chain")
    if chain:
        delete_chain(chain)
        done.append(f"removed iptables chain {chain}")
    return done
