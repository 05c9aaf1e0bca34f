"""A small cluster of the reference system (three nodes, one tablet unless asked) on the local backend, with
a system client, for backend and fault tests."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fencepost_reference.info import cluster_info
from fencepost_reference.plugin import ReferencePlugin

from harness.backends.iptables import leftover_chains
from harness.backends.local import LocalBackend
from harness.cluster import Cluster, running
from harness.config import TestConfig
from system.client import Client


@asynccontextmanager
async def local_cluster(tmp_path: Path, client_timeout: float, nodes: int = 3,
                        needs: frozenset[str] = frozenset(), **fields: object) -> AsyncIterator[tuple[Cluster, Client]]:
    """Yield the running cluster and a client; tear both down, then check that the run's iptables chain
    (if it made one) is gone. Other runs on the machine may have chains of their own meanwhile."""
    fields.setdefault("options", {"tablets": 1})
    test = TestConfig(nodes=nodes, **fields)  # type: ignore[arg-type]
    async with running(test, ReferencePlugin(), LocalBackend(), tmp_path, needs) as cluster:
        client = Client(cluster_info(cluster)["operators"], timeout=client_timeout)
        try:
            yield cluster, client
        finally:
            await client.close()
    chain = json.loads((tmp_path / "cleanup.json").read_text()).get("iptables_chain")
    assert chain is None or chain not in leftover_chains()
