"""A small cluster (three nodes, one tablet unless asked) on the local backend with a system client, for
partition tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from harness.backends.iptables import leftover_chains
from harness.backends.local import LocalBackend
from harness.config import TestConfig
from system.client import Client


@asynccontextmanager
async def local_cluster(tmp_path: Path, client_timeout: float, nodes: int = 3,
                        tablets: int = 1) -> AsyncIterator[tuple[LocalBackend, Client]]:
    """Yield the running backend and a client; tear both down, then check no iptables chain is left."""
    backend = LocalBackend()
    chains_before = leftover_chains()
    await backend.setup(TestConfig(nodes=nodes, tablets=tablets), tmp_path)
    client = Client(backend.cluster_info()["operators"], timeout=client_timeout)
    try:
        yield backend, client
    finally:
        await client.close()
        await backend.teardown()
    assert leftover_chains() == chains_before
