"""Helpers for tests that drive a real reference cluster on the local backend through Fencepost's seam."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from harness import registry
from harness.backends.local import LocalBackend
from harness.cluster import Cluster, running
from harness.config import TestConfig
from harness.protocols import Nemesis
from harness.systems.reference.plugin import ReferencePlugin


def load_fault(name: str) -> Nemesis:
    """Fault package ``name`` as a reference-system run gets it (the system's own, else the generic one)."""
    return registry.load_nemesis(name, ReferencePlugin())


@asynccontextmanager
async def reference_cluster(tmp_path: Path, **fields: Any) -> AsyncIterator[Cluster]:
    """A ready reference cluster for ``TestConfig(**fields)`` on the local backend, prepared for what its
    ``nemesis`` packages need; torn down afterwards."""
    test = TestConfig(**fields)
    needs = registry.needs_of(load_fault(n) for n in test.nemesis)
    async with running(test, ReferencePlugin(), LocalBackend(), tmp_path, needs) as cluster:
        yield cluster


def node_events(cluster: Cluster, node: str) -> list[dict[str, Any]]:
    """The node's event log as it is now."""
    path = Path(str(cluster.specs[node].data_dir)) / "events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


async def leaders(cluster: Cluster) -> dict[int, str]:
    """Each tablet's leader, as the operator routes (tablets without one omitted)."""
    plugin = cluster.system
    assert isinstance(plugin, ReferencePlugin)
    routing = await plugin.routing(cluster) or {"tablets": {}}
    return {int(t): m["leader"] for t, m in routing["tablets"].items() if m.get("leader")}
