"""``fencepost bench etcd``: the harness's ok ops/s against a healthy 3-node etcd, beside a bare client loop.

Each run starts a fresh 3-member cluster on the local backend and measures, for ``--seconds``:

- **bare**: ``--concurrency`` tasks, each with its own client bound to a member in turn, running the
  register workload's operations (the same generator) back to back, with nothing recorded;
- **harness**: a whole ``fencepost test`` of the same workload at the same concurrency and no rate limit:
  the workers record every invocation and completion, time out operations and reopen clients; its ok
  operations over its main phase;
- with ``--aetcd`` (when the aetcd package is importable): the bare loop again through aetcd, the gRPC
  client, for the choice of client (docs/etcd.md).

Figures are medians over ``--runs``; ``harness_over_bare`` is the median of the per-run ratios. The last
line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from fencepost import Invocation, nearest_rank

Op = Callable[[Invocation], Awaitable[str]]


async def loop(make: Callable[[int], Awaitable[tuple[Op, Callable[[], Awaitable[None]]]]], concurrency: int,
               seconds: float) -> dict[str, Any]:
    """Run the register workload's operations back to back from ``concurrency`` clients for ``seconds``."""
    from fencepost import TestConfig, load_workload

    workload = load_workload("register", TestConfig(system="etcd", concurrency=concurrency))
    source = workload.generator(random.Random(1), concurrency)
    latencies: list[float] = []
    outcomes = {"ok": 0, "fail": 0, "info": 0}

    async def worker(w: int, until: float) -> None:
        invoke, close = await make(w)
        try:
            while time.monotonic() < until:
                op = source.next_op(w)
                if op is None:
                    return
                started = time.perf_counter()
                outcome = await invoke(op)
                outcomes[outcome] += 1
                if outcome == "ok":
                    latencies.append((time.perf_counter() - started) * 1000)
        finally:
            await close()

    start = time.monotonic()
    await asyncio.gather(*(worker(w, start + seconds) for w in range(concurrency)))
    elapsed = time.monotonic() - start
    return {"ok_per_s": outcomes["ok"] / elapsed, "p50_ms": nearest_rank(latencies, 0.5),
            "p99_ms": nearest_rank(latencies, 0.99), "outcomes": outcomes}


async def bare(a: argparse.Namespace, run_dir: Path, client: str) -> dict[str, Any]:
    """The bare loop against a fresh cluster, through the gateway client or aetcd."""
    from fencepost import LocalBackend, TestConfig, running
    from fencepost_etcd.client import EtcdClient
    from fencepost_etcd.plugin import EtcdPlugin

    async with running(TestConfig(system="etcd", nodes=3), EtcdPlugin(), LocalBackend(), run_dir) as cluster:
        async def gateway_client(w: int) -> tuple[Op, Callable[[], Awaitable[None]]]:
            c = EtcdClient("register")
            await c.open(cluster)

            async def invoke(op: Invocation) -> str:
                return (await c.invoke(op)).type

            return invoke, c.close

        async def aetcd_client(w: int) -> tuple[Op, Callable[[], Awaitable[None]]]:
            import aetcd

            host, port = cluster.address(cluster.nodes()[w % len(cluster.nodes())])
            c = aetcd.Client(host=host, port=port, timeout=4)

            async def invoke(op: Invocation) -> str:
                key = str(op.key).encode()
                try:
                    if op.f == "read":
                        await c.get(key)
                    elif op.f == "write":
                        await c.put(key, json.dumps(op.value).encode())
                    else:
                        expected, new = op.value
                        compare = (c.transactions.create(key) == 0 if expected is None
                                   else c.transactions.value(key) == json.dumps(expected).encode())
                        ok, _ = await c.transaction([compare], [c.transactions.put(key, json.dumps(new).encode())],
                                                    [])
                        return "ok" if ok else "fail"
                    return "ok"
                except aetcd.exceptions.ClientError:
                    return "info"

            return invoke, c.close

        return await loop(gateway_client if client == "gateway" else aetcd_client, a.concurrency, a.seconds)


def harness_run(a: argparse.Namespace, store: Path) -> dict[str, Any]:
    """A whole ``fencepost test`` of the register workload, no faults, no rate limit."""
    from fencepost import TestConfig, run_test

    config = TestConfig(system="etcd", workload="register", nodes=3, concurrency=a.concurrency, rate=0,
                        time_limit=a.seconds, recovery=0.5, seed=1, name="bench-etcd")
    outcome = run_test(config, store)
    ops = outcome.run.read_history()
    latencies = [(c.time - i.time) / 1e6 for i, c in _pairs(ops) if c.type.value == "ok"]
    return {"ok_per_s": outcome.ok_ops / a.seconds, "p50_ms": nearest_rank(latencies, 0.5),
            "p99_ms": nearest_rank(latencies, 0.99), "valid": outcome.valid}


def _pairs(ops: list[Any]) -> list[tuple[Any, Any]]:
    pending: dict[Any, Any] = {}
    out = []
    for op in ops:
        if op.process == "nemesis":
            continue
        if op.type.value == "invoke":
            pending[op.process] = op
        elif op.process in pending:
            out.append((pending.pop(op.process), op))
    return out


def main(runs: int, args: list[str]) -> None:
    """Run the benchmark; print progress, then one JSON line of median figures."""
    p = argparse.ArgumentParser(prog="fencepost bench etcd")
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--concurrency", type=int, default=10)
    p.add_argument("--aetcd", action="store_true", help="also measure the bare loop through aetcd")
    a = p.parse_args(args)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="fencepost-bench-etcd-") as tmp:
        for i in range(max(1, runs)):
            row = {"bare": asyncio.run(bare(a, Path(tmp) / f"bare{i}", "gateway")),
                   "harness": harness_run(a, Path(tmp) / "store")}
            if a.aetcd:
                row["aetcd"] = asyncio.run(bare(a, Path(tmp) / f"aetcd{i}", "aetcd"))
            rows.append(row)
            print(f"run {i + 1}/{runs}: " + "  ".join(f"{k} {v['ok_per_s']:.0f} ok/s (p50 {v['p50_ms']:.1f} ms)"
                                                      for k, v in row.items()), flush=True)
    out: dict[str, Any] = {"bench": "etcd", "runs": len(rows), "seconds": a.seconds, "concurrency": a.concurrency}
    for kind in rows[0]:
        for figure in ("ok_per_s", "p50_ms", "p99_ms"):
            out[f"{kind}_{figure}"] = round(statistics.median(r[kind][figure] for r in rows), 2)
    out["harness_over_bare"] = round(statistics.median(r["harness"]["ok_per_s"] / r["bare"]["ok_per_s"]
                                                       for r in rows), 3)
    if a.aetcd:
        out["aetcd_over_gateway"] = round(statistics.median(r["aetcd"]["ok_per_s"] / r["bare"]["ok_per_s"]
                                                            for r in rows), 3)
    out["all_valid"] = all(r["harness"]["valid"] is True for r in rows)
    print(json.dumps(out), flush=True)
