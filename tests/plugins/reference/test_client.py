"""The harness's reference client: a worker's client starts from the worker's node, every time it is opened.

A leader cut off from its followers and the operator, but not from clients, times out the writes sent to it.
The worker reopens its client after each timeout; bound to the worker, the new client starts from the same
node, so with ``stale-leader-reads`` the worker reads what the deposed leader still serves after another
leader took a newer write (as each of Jepsen's worker threads keeps its node).
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest
from fencepost_reference.client import ReferenceClient
from fencepost_reference.info import cluster_info, operators

from harness.backends.iptables import why_unavailable
from harness.cluster_view import ClusterView
from harness.polling import poll_until
from harness.protocols import Invocation
from nemesis.partition import grudge_for
from tests.harness.backends.local_cluster import local_cluster
from tests.plugins.reference.cluster_kit import leaders

pytestmark = pytest.mark.skipif(why_unavailable() is not None, reason=f"{why_unavailable()}")


def addresses(cluster: ClusterView) -> list[tuple[str, int]]:
    return list(cluster_info(cluster)["operators"])


async def bound(worker: int, cluster: ClusterView) -> ReferenceClient:
    client = ReferenceClient(addresses, timeout=1.5)
    client.bind(worker)
    await client.open(cluster)
    return client


async def scenario(tmp_path: Path) -> list[object]:
    async with local_cluster(tmp_path, client_timeout=2.0, bug=["stale-leader-reads"]) as (cluster, client):
        old = (await leaders(cluster))[0]
        worker = cluster.nodes().index(old) + 3 * len(cluster.nodes())  # the old leader's node, modulo
        assert (await client.put("k", 0)).type == "ok"
        await cluster.network.partition(grudge_for("leader-alone", cluster.nodes(), random.Random(0), leader=old,
                                                   operators=operators(cluster)))
        mine = await bound(worker, cluster)
        try:
            hung = await mine.invoke(Invocation("write", "k", 1))
            assert hung.type == "info", hung
            async def another() -> str | None:
                leader = (await leaders(cluster)).get(0)
                return leader if leader != old else None

            assert await poll_until(another, 30.0, 0.2), "the operator never elected another leader"
            # the new leader takes the newer write (the other client's first try may time out on the old one)
            assert (await client.put("k", 2)).type == "ok" or (await client.put("k", 2)).type == "ok"
            reads = []
            for _ in range(3):  # the worker reopens after its timeout, from its own node again
                await mine.close()
                mine = await bound(worker, cluster)
                reads.append((await mine.invoke(Invocation("read", "k", None))).value)
            return reads
        finally:
            await mine.close()


def test_a_worker_whose_node_was_deposed_reads_from_it_after_every_reopening(tmp_path: Path) -> None:
    reads = asyncio.run(scenario(tmp_path))
    assert 2 not in reads and set(reads) <= {0, 1}, reads  # the deposed leader's value, three times
