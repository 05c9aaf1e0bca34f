"""etcd through Fencepost's seam, against real etcd members: exact outcomes, the leader, a wipe that rejoins
under a new identity, and membership changes."""

from __future__ import annotations

import asyncio
import random
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from fencepost_etcd.client import EtcdClient
from fencepost_etcd.gateway import Definite, Gateway, Indefinite
from fencepost_etcd.plugin import EtcdPlugin

from harness.backends.local import LocalBackend
from harness.cluster import Cluster, running
from harness.config import TestConfig
from harness.protocols import FaultSpec, Invocation
from nemesis.partition import package as partition_package

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("etcd") is None, reason="etcd is not installed")]


@asynccontextmanager
async def etcd(tmp_path: Path, nodes: int = 3) -> AsyncIterator[Cluster]:
    async with running(TestConfig(system="etcd", nodes=nodes), EtcdPlugin(), LocalBackend(), tmp_path) as cluster:
        yield cluster


def gateway(cluster: Cluster, node: str, timeout: float = 2.0) -> Gateway:
    host, port = cluster.address(node)
    return Gateway(f"http://{host}:{port}", timeout)


def test_outcomes_are_exact(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with etcd(tmp_path) as cluster:
            g = gateway(cluster, "n1")
            try:
                assert await g.cas("k", None, "1") and not await g.cas("k", None, "2")  # absent, then present
                assert await g.cas("k", "1", "3") and not await g.cas("k", "1", "4")
                assert (await g.get("k"))[0] == "3"
                with pytest.raises(Definite, match="lease not found"):
                    await g.keep_alive("12345")
                await cluster.processes.pause("n2")
                paused = gateway(cluster, "n2", timeout=0.5)
                with pytest.raises(Indefinite, match="Timeout"):  # it may have been applied: nobody knows
                    await paused.put("x", "1")
                await paused.close()
                await cluster.processes.resume("n2")
                await cluster.processes.kill("n3")
                refused = gateway(cluster, "n3")
                with pytest.raises(Definite, match="ConnectError"):  # the request never left
                    await refused.put("x", "1")
                await refused.close()
                client = EtcdClient("register")
                client.gateway = gateway(cluster, "n3")
                assert (await client.invoke(Invocation("write", "y", 1))).type == "fail"
                assert (await client.invoke(Invocation("read", "y"))).type == "fail"
                await client.close()
            finally:
                await g.close()

    asyncio.run(scenario())


def test_the_leader_comes_from_etcds_status_and_follows_a_kill(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with etcd(tmp_path) as cluster:
            (leader,) = await cluster.primaries()
            assert leader in cluster.nodes()
            await cluster.processes.kill(leader)
            for _ in range(100):
                found = await cluster.primaries()
                if found and found != [leader]:
                    break
                await asyncio.sleep(0.1)
            assert found and found[0] != leader

    asyncio.run(scenario())


def test_a_wiped_member_rejoins_as_a_new_member_never_under_its_old_identity(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with etcd(tmp_path) as cluster:
            plugin = cluster.system
            assert isinstance(plugin, EtcdPlugin)
            g = gateway(cluster, "n1")
            await g.put("before", "1")
            old = (await plugin.member_ids(cluster))["n3"]
            extra = await cluster.wipe("n3")
            assert extra[:2] == ["--initial-cluster-state", "existing"]
            await plugin.ready(cluster, 60)
            ids = await plugin.member_ids(cluster)
            assert set(ids) == {"n1", "n2", "n3"} and ids["n3"] != old
            n3 = gateway(cluster, "n3")
            assert (await n3.get("before"))[0] == "1"  # it caught up from the others
            await n3.close()
            await g.close()

    asyncio.run(scenario())


def test_a_member_wiped_while_the_leader_is_cut_off_rejoins_once_the_network_heals(tmp_path: Path) -> None:
    """As in a default campaign's run: the rejoin after a wipe finds no quorum (the leader cut off, the wiped
    member down), and once the partition heals every member runs, is a member, and serves a linearizable read."""
    async def scenario() -> None:
        async with etcd(tmp_path) as cluster:
            plugin = cluster.system
            assert isinstance(plugin, EtcdPlugin)
            partition = partition_package()
            cut = await partition.start(cluster, FaultSpec("partition", "leader"), random.Random(1))
            lone = next(n for n, unreachable in cut["grudge"].items() if len(unreachable) == 2)
            wipe = asyncio.create_task(cluster.wipe(next(n for n in cluster.nodes() if n != lone)))
            await asyncio.sleep(8)  # the rejoin's member remove cannot commit meanwhile
            await partition.stop(cluster)
            assert (await wipe)[:2] == ["--initial-cluster-state", "existing"]
            await plugin.ready(cluster, 30)
            assert set(await plugin.member_ids(cluster)) == set(cluster.nodes())
            for node in cluster.nodes():
                assert cluster.processes.running(node)
                g = gateway(cluster, node, timeout=5.0)
                assert (await g.get("never-written")) == (None, 0)  # linearizable: through the leader
                await g.close()

    asyncio.run(scenario())


def test_membership_removes_a_member_and_adds_it_back(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with etcd(tmp_path) as cluster:
            plugin = cluster.system
            assert isinstance(plugin, EtcdPlugin)
            state = cluster.membership
            done = await state.change(cluster, "remove", random.Random(2))
            removed = done["removed"]
            assert removed not in await plugin.member_ids(cluster, exclude=[removed])
            assert not cluster.processes.running(removed)
            assert (await state.restore(cluster))["added"] == [removed]
            await state.settle(cluster)
            assert set(await plugin.member_ids(cluster)) == {"n1", "n2", "n3"}

    asyncio.run(scenario())


def test_clock_faults_are_refused_for_etcd_saying_why(tmp_path: Path) -> None:
    from harness.launch import prepare
    from harness.registry import Refused

    with pytest.raises(Refused, match="etcd is a Go program"):
        prepare(TestConfig(system="etcd", nemesis=["clock"]))


def test_a_client_reopened_after_another_closed_takes_its_member(tmp_path: Path) -> None:
    """As a Jepsen worker keeps its node: a worker's new client after a timeout stays on the member it was
    cut off with, so a partitioned member keeps its clients (and serves them stale serializable reads)."""
    async def scenario() -> None:
        async with etcd(tmp_path) as cluster:
            clients = [EtcdClient("register") for _ in range(3)]
            for c in clients:
                await c.open(cluster)
            assert sorted(c.home or "" for c in clients) == cluster.nodes()  # the next member, in turn
            await clients[1].close()
            again = EtcdClient("register")
            await again.open(cluster)
            assert again.home == clients[1].home
            assert (await again.invoke(Invocation("write", "k", 1))).type == "ok"
            for c in [clients[0], clients[2], again]:
                await c.close()

    asyncio.run(scenario())


def test_a_bound_worker_opens_on_its_own_member_every_time(tmp_path: Path) -> None:
    """The default campaign's workload shape: worker ``i`` on member ``i mod n``, again after every reopening."""
    from harness.client_workers import _open_bound

    async def scenario() -> None:
        async with etcd(tmp_path) as cluster:
            nodes = cluster.nodes()
            for worker in range(7):
                for _ in range(2):  # reopened after an indeterminate op, as client_worker does
                    client = await _open_bound(lambda: EtcdClient("register"), worker, cluster)
                    assert isinstance(client, EtcdClient) and client.home == nodes[worker % len(nodes)]
                    assert (await client.invoke(Invocation("read", f"k{worker}", None))).type == "ok"
                    await client.close()

    asyncio.run(scenario())
