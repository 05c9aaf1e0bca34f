"""Fixtures for the reference system's tests: real processes on loopback, always torn down."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from system import admin
from system.client import Client, Result
from system.launcher import Cluster


def wait_for(cond: Callable[[], Any], timeout: float = 30.0, interval: float = 0.1, what: str = "condition") -> Any:
    """Poll ``cond`` until it returns something truthy; fail the test after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    last_exc: Exception | None = None
    while time.monotonic() < deadline:
        try:
            value = cond()
            if value:
                return value
        except Exception as e:  # a node may be restarting
            last_exc = e
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what} (last error: {last_exc})")


def node_call(c: Cluster, node: str, method: str, params: dict[str, Any], timeout: float = 5.0) -> Any:
    """One RPC to a node, naming its UUID."""
    host, port = c.node_addrs[node]
    return admin.call_sync(host, port, method, params, to=c.node_uuid(node), timeout=timeout)


def op_call(c: Cluster, method: str, params: dict[str, Any], op: str = "op1", timeout: float = 5.0) -> Any:
    """One RPC to an operator."""
    host, port = c.operator_addrs[op]
    return admin.call_sync(host, port, method, params, timeout=timeout)


def shard(c: Cluster, tablet: int, op: str = "op1") -> dict[str, Any]:
    """The operator's metadata record of a tablet."""
    return dict(op_call(c, "status", {}, op)["tablets"][str(tablet)])


def run(coro: Any) -> Any:
    """Run a coroutine to completion (tests are synchronous)."""
    return asyncio.run(coro)


async def do_ops(c: Cluster, ops: list[tuple[str, tuple[Any, ...]]], timeout: float = 10.0) -> list[Result]:
    """Run client operations one after another; return their results."""
    cl = Client(c.operators(), timeout=timeout)
    try:
        return [await getattr(cl, name)(*args) for name, args in ops]
    finally:
        await cl.close()


def key_on_tablet(tablet: int, tablets: int, prefix: str = "k") -> str:
    """A key that hashes to ``tablet``."""
    from system.routing import tablet_for

    i = 0
    while tablet_for(f"{prefix}{i}", tablets) != tablet:
        i += 1
    return f"{prefix}{i}"


@pytest.fixture
def make_cluster(tmp_path: Path) -> Iterator[Callable[..., Cluster]]:
    """A factory for clusters under the test's tmp dir; every cluster it made is stopped afterwards."""
    made: list[Cluster] = []

    def make(name: str = "c", **kw: Any) -> Cluster:
        c = Cluster.start(str(tmp_path / name), **kw)
        made.append(c)
        return c

    yield make
    for c in made:
        c.stop()


def wal_path(c: Cluster, node: str, tablet: int) -> str:
    """Where a node keeps a tablet's WAL."""
    return os.path.join(c.procs[node].info["data"], "tablets", str(tablet), "wal")
