"""A running PostgreSQL cluster for the plugin's tests, and the reason to skip when none can run here."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fencepost_postgresql.plugin import PostgresPlugin

from harness.backends.local import LocalBackend
from harness.cluster import Cluster, running
from harness.config import TestConfig

WHY_NOT = PostgresPlugin().unavailable("local")
"""Why PostgreSQL cannot run here (None when it can)."""


@asynccontextmanager
async def postgres(tmp_path: Path, nodes: int = 1, bugs: tuple[str, ...] = (),
                   workload: str = "list-append", nemesis: tuple[str, ...] = ()) -> AsyncIterator[Cluster]:
    """A started, ready cluster (the primary alone by default), torn down after the block."""
    config = TestConfig(system="postgresql", workload=workload, nodes=nodes, bug=list(bugs))
    async with running(config, PostgresPlugin(), LocalBackend(), tmp_path, frozenset(nemesis)) as cluster:
        yield cluster
