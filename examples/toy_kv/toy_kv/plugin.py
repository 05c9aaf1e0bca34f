"""toy-kv as a Fencepost system: its processes, its client, its capabilities and its known-unsafe mode.

This is everything a plugin needs. Fencepost finds it through the ``fencepost.systems`` entry point in
this package's ``pyproject.toml``; the framework's generic workloads (register, set), faults (kill,
pause, partition) and checkers do the rest.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from fencepost import NODE, Bug, Layout, ProcessSpec, Recipe
from fencepost import capabilities as caps

if TYPE_CHECKING:
    from fencepost import Checker, Client, ClusterView, Nemesis, TestConfig, Workload


class ToyKv:
    """A primary-backup key-value store: n1 takes writes, n2 serves reads, n2..nN keep the data durable."""

    name = "toy-kv"
    description = "a toy primary-backup key-value store (examples/toy_kv): the plugin tutorial's system"
    workloads = ("register", "set")
    capabilities = frozenset({caps.PROCESSES, caps.NETWORK})

    def code(self) -> Mapping[str, Path]:
        """The ``toy_kv`` package: local processes import it from here."""
        return {"toy_kv": Path(__file__).resolve().parent}

    def processes(self, test: TestConfig, layout: Layout) -> list[ProcessSpec]:
        """One server per node, each on its own address and data directory."""
        names = [f"n{i + 1}" for i in range(max(2, test.nodes))]
        addrs = {n: (layout.host(n), layout.port(n)) for n in names}
        peers = ",".join(f"{n}={h}:{p}" for n, (h, p) in addrs.items())
        bugs = [a for b in test.bug for a in ("--bug", b)]
        return [ProcessSpec(n, NODE, (layout.python, "-m", "toy_kv.server", "--name", n, "--host", h, "--port",
                                      str(p), "--data", layout.data_dir(n), "--peers", peers, *bugs),
                            p, data_dir=layout.data_dir(n))
                for n, (h, p) in addrs.items()]

    async def ready(self, cluster: ClusterView, timeout: float) -> None:
        """Wait until the primary has resynced and takes a write."""
        host, port = cluster.address("n1")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                reader, writer = await asyncio.open_connection(host, port)
                writer.write(b'{"op": "write", "key": "fencepost-ready", "value": 1}\n')
                answer = json.loads(await reader.readline())
                writer.close()
                if answer.get("ok") is True:
                    return
            except (OSError, ValueError):
                pass
            await asyncio.sleep(0.1)
        raise TimeoutError(f"toy-kv's primary did not serve within {timeout:g} s")

    def client(self, workload: Workload, cluster: ClusterView) -> Client:
        """A client of the primary."""
        from toy_kv.client import ToyClient

        return ToyClient(workload.name)

    def checkers(self, test: TestConfig) -> list[Checker]:
        """No checkers of its own: the workloads' black-box checkers judge it."""
        return []

    def faults(self) -> Mapping[str, Callable[[], Nemesis]]:
        """No faults of its own: the generic kill, pause and partition apply."""
        return {}

    def bugs(self) -> Mapping[str, Bug]:
        """``async-replication``: the primary acknowledges a write before a backup has it."""
        recipe = Recipe("register", ("partition", "kill"), 30.0, 5.0,
                        "the standby serves reads that miss acknowledged writes, and a fault makes the primary "
                        "resync from it and lose them; the linearizability checker sees the stale reads")
        return {"async-replication": Bug("async-replication", "the primary acknowledges a write before a backup "
                                         "has it (it ships writes every two seconds)", recipe)}


def plugin() -> ToyKv:
    """A fresh toy-kv plugin (the ``fencepost.systems`` entry point)."""
    return ToyKv()
