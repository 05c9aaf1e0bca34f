"""Local runs are isolated: a process's outgoing links are cut by its cgroup even when it never binds its
socket, and two campaigns on one machine, each in its own address block, do not cut each other."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.backends.cgroups import cgroup2_root
from harness.backends.iptables import why_unavailable
from harness.backends.local import LocalBackend
from harness.cluster import Cluster
from harness.cluster_view import ClusterView
from harness.config import TestConfig
from harness.plugin_api import NODE, Layout, ProcessSpec
from tests.harness.backends.process_only import ProcessOnly

pytestmark = pytest.mark.skipif(why_unavailable() is not None, reason=f"{why_unavailable()}")

PROBE = """
import socket, sys, time
peer, port, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
listener = socket.socket(); listener.bind((sys.argv[4], int(sys.argv[5]))); listener.listen()
while True:
    try:
        socket.create_connection((peer, port), 0.3).close()  # never bound: it leaves from 127.0.0.1
        word = "ok"
    except OSError:
        word = "cut"
    with open(out, "a") as fh:
        fh.write(word + "\\n")
    time.sleep(0.1)
"""


class Probes(ProcessOnly):
    """Two processes, a and b; each keeps trying to connect to the other and writes down what happened."""

    name = "probes"
    description = "two processes that connect to each other without binding their sockets"
    capabilities = frozenset({"processes", "network"})

    def processes(self, test: TestConfig, layout: Layout) -> list[ProcessSpec]:
        addr = {n: (layout.host(n), layout.port(n)) for n in ("a", "b")}
        specs = []
        for me, peer in (("a", "b"), ("b", "a")):
            Path(layout.data_dir(me)).mkdir(parents=True, exist_ok=True)
            out = str(Path(layout.data_dir(me)) / "seen")
            argv = (sys.executable, "-c", PROBE, *map(str, addr[peer]), out, *map(str, addr[me]))
            specs.append(ProcessSpec(me, NODE, argv, addr[me][1], data_dir=layout.data_dir(me)))
        return specs


def seen(cluster: ClusterView, name: str) -> list[str]:
    return (Path(str(cluster.specs[name].data_dir)) / "seen").read_text().split()


@pytest.mark.skipif(cgroup2_root() is None, reason="needs a writable cgroup v2 hierarchy")
def test_a_partition_cuts_a_process_that_never_binds_its_socket(tmp_path: Path) -> None:
    async def scenario() -> None:
        cluster = Cluster(TestConfig(), Probes(), LocalBackend())
        try:
            await cluster.start(tmp_path)
            await asyncio.sleep(0.8)
            assert seen(cluster, "a")[-3:] == ["ok"] * 3
            await cluster.network.partition({"a": ["b"], "b": ["a"]})
            await asyncio.sleep(1.5)
            assert seen(cluster, "a")[-3:] == ["cut"] * 3 and seen(cluster, "b")[-3:] == ["cut"] * 3
            await cluster.network.heal()
            await asyncio.sleep(1.0)
            assert seen(cluster, "a")[-2:] == ["ok"] * 2
        finally:
            await cluster.stop()
        backend = cluster.backend
        assert isinstance(backend, LocalBackend) and backend.groups is not None
        assert not backend.groups.base.exists()

    asyncio.run(scenario())


@pytest.mark.slow
def test_two_campaigns_with_partitions_on_one_machine_are_both_valid(tmp_path: Path) -> None:
    runs = [subprocess.Popen([sys.executable, "-m", "harness.cli.main", "test", "--nemesis", "partition,kill",
                              "--time-limit", "20", "--interval", "2", "--seed", str(seed), "--store",
                              str(tmp_path / f"s{seed}")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for seed in (1, 2)]
    deadline = time.monotonic() + 300
    outs = [r.communicate(timeout=max(1.0, deadline - time.monotonic())) for r in runs]
    assert [r.returncode for r in runs] == [0, 0], [o[1][-500:] for o in outs]
    blocks = set()
    for seed in (1, 2):
        (cleanup,) = (tmp_path / f"s{seed}").glob("*/*/cleanup.json")
        addresses = json.loads(cleanup.read_text())["addresses"]
        blocks |= {".".join(host.split(".")[:3]) for host, _ in addresses.values()}
    assert len(blocks) == 2, blocks
