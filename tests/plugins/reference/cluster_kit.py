"""Helpers for tests that drive a real reference cluster on the local backend through Fencepost's seam."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fencepost_reference.faults.guard import guard_of, unrepaired
from fencepost_reference.master import master_status
from fencepost_reference.plugin import ReferencePlugin

from harness import registry
from harness.backends.local import LocalBackend
from harness.cluster import running
from harness.cluster_view import ClusterView
from harness.config import TestConfig
from harness.polling import poll_until
from harness.protocols import Nemesis


def load_fault(name: str) -> Nemesis:
    """Fault package ``name`` as a reference-system run gets it (the system's own, else the generic one)."""
    return registry.load_nemesis(name, ReferencePlugin())


@asynccontextmanager
async def reference_cluster(tmp_path: Path, tablets: int | None = None, **fields: Any) -> AsyncIterator[ClusterView]:
    """A ready reference cluster for ``TestConfig(**fields)`` with ``tablets`` (the store's option) on the local
    backend, prepared for what its ``nemesis`` packages need; torn down afterwards."""
    if tablets is not None:
        fields["options"] = {**fields.get("options", {}), "tablets": tablets}
    test = TestConfig(**fields)
    needs = registry.needs_of(load_fault(n) for n in test.nemesis)
    async with running(test, ReferencePlugin(), LocalBackend(), tmp_path, needs) as cluster:
        yield cluster


def node_events(cluster: ClusterView, node: str) -> list[dict[str, Any]]:
    """The node's event log as it is now."""
    path = Path(str(cluster.specs[node].data_dir)) / "events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


async def leaders(cluster: ClusterView) -> dict[int, str]:
    """Each tablet's leader, as the operator routes (tablets without one omitted)."""
    plugin = cluster.system
    assert isinstance(plugin, ReferencePlugin)
    routing = await plugin.routing(cluster) or {"tablets": {}}
    return {int(t): m["leader"] for t, m in routing["tablets"].items() if m.get("leader")}


async def routed(cluster: ClusterView, tablet: int, limit_s: float) -> str:
    """The leader an operator routes ``tablet`` to, once one answers with one; fails after ``limit_s``."""
    deadline = time.monotonic() + limit_s
    while (leader := (await leaders(cluster)).get(tablet)) is None:
        assert time.monotonic() < deadline, f"no operator routes tablet {tablet}"
        await asyncio.sleep(0.5)
    return leader


async def whole(cluster: ClusterView, replacing: set[str], limit_s: float) -> dict[str, Any]:
    """The master's status once every tablet is whole and the members in ``replacing`` are retired
    (:func:`~fencepost_reference.faults.guard.unrepaired`); fails after ``limit_s``."""
    deadline = time.monotonic() + limit_s
    while True:
        st = await master_status(cluster)
        why = unrepaired(st, replacing)
        if why is None:
            return st
        assert time.monotonic() < deadline, why
        await asyncio.sleep(0.5)


async def kill_spare(cluster: ClusterView, tablet: str, limit_s: float = 30.0, wait_dead: bool = True) -> str:
    """Kill the member outside ``tablet``'s up set and (unless ``wait_dead`` is False) wait until the master
    sees it dead; its name."""
    st = await master_status(cluster)
    spare = next(m for m in st["members"] if m not in st["tablets"][tablet]["up"])
    await cluster.processes.kill(st["members"][spare]["name"])
    if not wait_dead:
        return str(st["members"][spare]["name"])

    async def seen_dead() -> bool:
        return not (await master_status(cluster))["members"][spare]["alive"]
    assert await poll_until(seen_dead, limit_s), "the master never saw the spare node die"
    return str(st["members"][spare]["name"])


async def rejoined(cluster: ClusterView, node: str, limit_s: float) -> str:
    """The member id process ``node`` rejoined under after a wipe (``n4~2``), once that member is normal and
    alive and every tablet is whole again; fails after ``limit_s``."""
    deadline = time.monotonic() + limit_s
    while True:
        st = await master_status(cluster)
        new = [m for m, r in st["members"].items() if r["name"] == node and m != node and r["state"] == "normal"
               and r["alive"]]
        if new and unrepaired(st, {node}) is None:
            return new[0]
        assert time.monotonic() < deadline, f"{node} did not rejoin whole: {unrepaired(st, {node})}"
        await asyncio.sleep(0.5)


async def turn_free(cluster: ClusterView, limit_s: float) -> None:
    """Wait until the cluster's damage guard would give a fault its turn; fails after ``limit_s``."""
    deadline = time.monotonic() + limit_s
    while (why := await guard_of(cluster).refusal(cluster)) is not None:
        assert time.monotonic() < deadline, why
        await asyncio.sleep(0.5)


async def cut_short_after(cluster: ClusterView, step: str, start: Awaitable[Any]) -> None:
    """Run a fault's ``start`` until the backend's ``step`` (``kill`` or ``erase``) has acted, then cancel
    it while that call has not yet returned, as the run's end cancels a start still acting. The backend's
    real step runs; only its return is held back."""
    backend: Any = cluster.backend
    real = getattr(backend, step)
    acted = asyncio.Event()

    async def held(name: str) -> None:
        await real(name)
        acted.set()
        await asyncio.sleep(30)  # the run ends meanwhile

    setattr(backend, step, held)
    task = asyncio.ensure_future(start)
    try:
        done, _ = await asyncio.wait([task, asyncio.ensure_future(acted.wait())], timeout=60,
                                     return_when=asyncio.FIRST_COMPLETED)
        assert acted.is_set(), f"the start ended before its {step}: {task.result() if task in done else None}"
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    finally:
        delattr(backend, step)


async def heal_restarts_the_one_down(cluster: ClusterView, package: Nemesis) -> None:
    """Check that exactly one node is down (the cut-short start's kill acted), run the package's heal,
    and check that every node runs again."""
    down = [n for n in cluster.nodes() if not cluster.processes.running(n)]
    assert len(down) == 1, down
    await package.heal(cluster)
    assert all(cluster.processes.running(n) for n in cluster.nodes())
