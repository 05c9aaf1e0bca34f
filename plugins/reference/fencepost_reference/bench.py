"""``fencepost bench system``: throughput and latency of the reference system, fsync on.

Each run starts a fresh local cluster (3 nodes, 1 tablet by default: one log whose group commit all
clients share), then drives it from 16 concurrent clients in this process: first puts for
``--seconds``, then gets for ``--seconds``. Only acknowledged (ok) operations count. The last line
printed is one JSON object holding the medians over the runs of puts_per_s, gets_per_s, put_p50_ms,
put_p99_ms, get_p50_ms and get_p99_ms.

``--storage both`` (the default) measures the cost of the lazy filesystem: each run is done on plain
directories and then on lazy storage (every node's data on the FUSE filesystem of
:mod:`harness.backends.lazyfs`), one after the other, so both see the same machine load. The plain
figures keep their names; the lazy ones are prefixed ``lazy_``, and ``lazy_ratio_<figure>`` is the
median over runs of lazy / plain. ``--storage plain`` or ``lazy`` measures one only (unprefixed).

Extra arguments: ``--seconds S`` (default 5), ``--clients N`` (16), ``--nodes N`` (3), ``--tablets N``
(1), ``--value-bytes N`` (100), ``--keys N`` (10000), ``--storage plain|lazy|both`` (both).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from fencepost import nearest_rank

FIGURES = ("puts_per_s", "gets_per_s", "put_p50_ms", "put_p99_ms", "get_p50_ms", "get_p99_ms")


async def _phase(operators: list[tuple[str, int]], kind: str, clients: int, seconds: float, keys: int,
                 value: str) -> dict[str, Any]:
    from system.client import Client

    latencies: list[float] = []
    outcomes = {"ok": 0, "fail": 0, "info": 0}

    async def worker(w: int, until: float) -> None:
        cl = Client(operators, timeout=10.0)
        i = w
        try:
            await cl.refresh()
            while time.monotonic() < until:
                key = f"k{i % keys}"
                t0 = time.perf_counter()
                r = await (cl.put(key, value) if kind == "put" else cl.get(key))
                dt = time.perf_counter() - t0
                outcomes[r.type] += 1
                if r.type == "ok":
                    latencies.append(dt * 1000)
                i += clients
        finally:
            await cl.close()

    start = time.monotonic()
    await asyncio.gather(*(worker(w, start + seconds) for w in range(clients)))
    elapsed = time.monotonic() - start
    return {"per_s": outcomes["ok"] / elapsed, "p50": nearest_rank(latencies, 0.5),
            "p99": nearest_rank(latencies, 0.99), "outcomes": outcomes}


async def _measure(a: argparse.Namespace, storage: str, run_dir: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    from fencepost import POWER_LOSS, LocalBackend, TestConfig, running
    from fencepost_reference.info import cluster_info
    from fencepost_reference.plugin import ReferencePlugin

    test = TestConfig(system="reference", nodes=a.nodes, options={"tablets": a.tablets})
    needs = frozenset({POWER_LOSS}) if storage == "lazy" else frozenset()
    async with running(test, ReferencePlugin(), LocalBackend(), run_dir, needs) as cluster:
        operators = list(cluster_info(cluster)["operators"])
        value = "v" * a.value_bytes
        puts = await _phase(operators, "put", a.clients, a.seconds, a.keys, value)
        gets = await _phase(operators, "get", a.clients, a.seconds, a.keys, value)
    return puts, gets


def one_run(a: argparse.Namespace, storage: str = "plain") -> dict[str, float]:
    """Start a cluster on ``storage`` (the local backend; lazy: the lazy filesystem under every node), measure
    puts then gets, stop it; the figures of this run."""
    with tempfile.TemporaryDirectory(prefix="fencepost-bench-") as d:
        puts, gets = asyncio.run(_measure(a, storage, Path(d)))
    print(f"  {storage}: puts {puts['outcomes']}  gets {gets['outcomes']}", flush=True)
    return {"puts_per_s": puts["per_s"], "gets_per_s": gets["per_s"], "put_p50_ms": puts["p50"],
            "put_p99_ms": puts["p99"], "get_p50_ms": gets["p50"], "get_p99_ms": gets["p99"]}


def main(runs: int, args: list[str]) -> None:
    """Run the benchmark ``runs`` times; print progress, then one JSON line of median figures."""
    p = argparse.ArgumentParser(prog="fencepost bench system")
    p.add_argument("--seconds", type=float, default=5.0)
    p.add_argument("--clients", type=int, default=16)
    p.add_argument("--nodes", type=int, default=3)
    p.add_argument("--tablets", type=int, default=1)
    p.add_argument("--value-bytes", type=int, default=100)
    p.add_argument("--keys", type=int, default=10000)
    p.add_argument("--storage", choices=("plain", "lazy", "both"), default="both")
    a = p.parse_args(args)
    storages = ("plain", "lazy") if a.storage == "both" else (a.storage,)
    results: dict[str, list[dict[str, float]]] = {s: [] for s in storages}
    for i in range(max(1, runs)):
        for storage in storages:
            r = one_run(a, storage)
            print(f"run {i + 1}/{runs} {storage}: " + "  ".join(f"{k}={r[k]:.1f}" for k in FIGURES), flush=True)
            results[storage].append(r)
    first = results[storages[0]]
    out: dict[str, Any] = {k: round(statistics.median(r[k] for r in first), 2) for k in FIGURES}
    if a.storage == "both":
        lazy = results["lazy"]
        out.update({f"lazy_{k}": round(statistics.median(r[k] for r in lazy), 2) for k in FIGURES})
        out.update({f"lazy_ratio_{k}": round(statistics.median(q[k] / p[k] for p, q in zip(first, lazy, strict=True)
                                                               if p[k]), 3) for k in FIGURES})
    out.update({"runs": len(first), "nodes": a.nodes, "tablets": a.tablets, "clients": a.clients,
                "seconds": a.seconds, "fsync": True, "storage": a.storage})
    print(json.dumps(out, sort_keys=True), flush=True)
