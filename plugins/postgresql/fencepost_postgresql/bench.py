"""``fencepost bench postgresql``: the harness's ok transactions/s against a bare psycopg loop of the same ones.

Each run starts a fresh cluster on the local backend (``--nodes``, 3 by default: the primary ``n1`` and two
hot standbys) and measures, for ``--seconds``, at ``--concurrency``:

- **bare**: ``--concurrency`` asyncio tasks, each with its own autocommit ``psycopg.AsyncConnection`` to the
  primary, running the list-append workload's transactions (the same generator, with the seed a test run
  gives it) back to back in plain psycopg: ``BEGIN ISOLATION LEVEL SERIALIZABLE`` (``READ ONLY`` for a
  transaction that only reads, as the client does), the client's statements, ``COMMIT``. A serialization
  failure or deadlock (40001, 40P01) counts as fail and is rolled back; nothing is recorded.
- **harness**: a whole ``fencepost test`` of list-append, no faults, no rate limit: the plugin's client, the
  workers recording every invocation and completion, the final reads, the check. Its main phase is the
  transactions invoked in the first ``--seconds`` from its first invocation (the final reads come later).

Both sides count alike: the ok transactions begun before the deadline, over the time from the start to the
last one's end (a transaction waiting out a deadlock runs past the deadline on either side).

The workload's skewed keys make many transactions serialization failures and some deadlocks; PostgreSQL
finds a deadlock only after ``deadlock_timeout`` (1 s by default), while the transactions queued behind it
wait, so a few deadlocks more or less move a run's figures a long way: use several runs.

Figures are medians over ``--runs``; ``harness_over_bare`` is the median of the per-run ratios;
``all_valid`` says whether every harness run was judged valid. The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, NoReturn

import psycopg

from fencepost import Invocation, TestConfig, fail, nearest_rank

WORKLOAD = "list-append"
SEED = 1
"""The seed of both sides' generators (a test run seeds its own from the config's seed)."""
DEADLOCK = "40P01"


def summary(outcomes: dict[str, int], latencies: list[float], seconds: float, deadlocks: int) -> dict[str, Any]:
    """ok/s over ``seconds``, p50/p99 of the ok latencies (ms), the outcome counts, and how many of the
    fails were deadlocks (each found only after the server's ``deadlock_timeout`` of waiting)."""
    return {"ok_per_s": outcomes["ok"] / seconds if seconds > 0 else 0.0, "p50_ms": nearest_rank(latencies, 0.5),
            "p99_ms": nearest_rank(latencies, 0.99), "outcomes": dict(outcomes), "deadlocks": deadlocks}


async def bare_txn(conn: psycopg.AsyncConnection[Any], op: Invocation) -> tuple[str, str | None]:
    """One list-append transaction in plain psycopg on an autocommit connection: ok, or fail when the server
    aborted it (rolled back here), with the abort's SQLSTATE."""
    from fencepost_postgresql.client import ABORTS, STATEMENTS

    read_only = all(m[0] == "r" for m in op.value)
    try:
        await conn.execute(f"BEGIN ISOLATION LEVEL SERIALIZABLE{' READ ONLY' if read_only else ''}")
        for f, k, v in op.value:
            if f == "r":
                cur = await conn.execute(STATEMENTS[(WORKLOAD, "r")], (k,))
                await cur.fetchone()
            else:
                await conn.execute(STATEMENTS[(WORKLOAD, f)], (k, str(v)))
        await conn.execute("COMMIT")
        return "ok", None
    except ABORTS as e:
        await conn.execute("ROLLBACK")
        return "fail", e.sqlstate


async def bare(a: argparse.Namespace, run_dir: Path) -> dict[str, Any]:
    """The bare loop against a fresh cluster: no client, no workers, nothing recorded."""
    from fencepost import LocalBackend, load_workload, running
    from fencepost_postgresql.plugin import PRIMARY, PostgresPlugin
    from fencepost_postgresql.sql import conninfo

    config = TestConfig(system="postgresql", workload=WORKLOAD, nodes=a.nodes, concurrency=a.concurrency, seed=SEED)
    workload = load_workload(WORKLOAD, config)
    source = workload.generator(random.Random(f"fencepost-workload:{SEED}"), a.concurrency)
    latencies: list[float] = []
    outcomes = {"ok": 0, "fail": 0, "info": 0}
    deadlocks = 0
    async with running(config, PostgresPlugin(), LocalBackend(), run_dir) as cluster:
        address = cluster.address(PRIMARY)

        async def worker(w: int, until: float) -> None:
            nonlocal deadlocks
            conn = await psycopg.AsyncConnection.connect(conninfo(address), autocommit=True)
            try:
                while time.monotonic() < until:
                    op = source.next_op(w)
                    if op is None:
                        return
                    started = time.perf_counter()
                    try:
                        outcome, sqlstate = await bare_txn(conn, op)
                        deadlocks += sqlstate == DEADLOCK
                    except (psycopg.Error, OSError):  # unexpected on a healthy cluster: counted, connection renewed
                        outcome = "info"
                        await conn.close()
                        conn = await psycopg.AsyncConnection.connect(conninfo(address), autocommit=True)
                    outcomes[outcome] += 1
                    if outcome == "ok":
                        latencies.append((time.perf_counter() - started) * 1000)
            finally:
                await conn.close()

        start = time.monotonic()
        await asyncio.gather(*(worker(w, start + a.seconds) for w in range(a.concurrency)))
        elapsed = time.monotonic() - start
    return summary(outcomes, latencies, elapsed, deadlocks)


def harness_run(a: argparse.Namespace, store: Path) -> dict[str, Any]:
    """A whole ``fencepost test`` of list-append, no faults, no rate limit; its main phase's figures."""
    from fencepost import pair_calls, run_test

    config = TestConfig(system="postgresql", workload=WORKLOAD, nodes=a.nodes, concurrency=a.concurrency, rate=0,
                        time_limit=a.seconds, recovery=0.5, seed=SEED, name="bench-postgresql")
    outcome = run_test(config, store)
    calls = pair_calls(outcome.run.read_history())
    first = min((c.call_time for c in calls), default=0)
    main = [c for c in calls if c.call_time - first < a.seconds * 1e9]  # the final reads come after the main phase
    end = max((c.complete.time for c in main if c.complete is not None), default=first)
    outcomes = {"ok": 0, "fail": 0, "info": 0}
    latencies: list[float] = []
    deadlocks = 0
    for c in main:
        outcomes[c.outcome.value] += 1
        if c.outcome.value == "ok" and c.complete is not None:
            latencies.append((c.complete.time - c.call_time) / 1e6)
        deadlocks += c.complete is not None and str(c.complete.error or "").startswith(DEADLOCK)
    return summary(outcomes, latencies, (end - first) / 1e9, deadlocks) | {"valid": outcome.valid}


def progress(kind: str, figures: dict[str, Any]) -> str:
    """One side's figures of one run, for the progress line."""
    o = figures["outcomes"]
    return (f"{kind} {figures['ok_per_s']:.0f} ok/s (p50 {figures['p50_ms']:.1f} ms, p99 {figures['p99_ms']:.1f} ms, "
            f"{o['ok']} ok, {o['fail']} fail, {figures['deadlocks']} deadlocks)")


class _Parser(argparse.ArgumentParser):
    """Bad arguments end as one line and exit 3, as everywhere in the CLI."""

    def error(self, message: str) -> NoReturn:
        fail(f"{self.prog}: {message}")


def positive(kind: type[int] | type[float]) -> Any:
    """An argparse type: a number of ``kind`` above 0."""
    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"{text!r} must be above 0")
        return value
    return parse


def main(runs: int, args: list[str]) -> None:
    """Run the benchmark; print progress, then one JSON line of median figures."""
    from fencepost_postgresql.plugin import PostgresPlugin

    p = _Parser(prog="fencepost bench postgresql")
    p.add_argument("--seconds", type=positive(float), default=10.0, help="seconds of each side's main phase")
    p.add_argument("--concurrency", type=positive(int), default=10, help="clients on each side")
    p.add_argument("--nodes", type=positive(int), default=3, help="the primary and nodes-1 hot standbys")
    a = p.parse_args(args)
    why_not = PostgresPlugin().unavailable("local")
    if why_not is not None:
        fail(f"PostgreSQL cannot run here: {why_not}")
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="fencepost-bench-postgresql-") as tmp:
        for i in range(max(1, runs)):
            row = {"bare": asyncio.run(bare(a, Path(tmp) / f"bare{i}")),
                   "harness": harness_run(a, Path(tmp) / "store")}
            rows.append(row)
            print(f"run {i + 1}/{max(1, runs)}: " + "  ".join(progress(k, v) for k, v in row.items()), flush=True)
    out: dict[str, Any] = {"bench": "postgresql", "runs": len(rows), "seconds": a.seconds,
                           "concurrency": a.concurrency, "nodes": a.nodes}
    for kind in ("bare", "harness"):
        for figure in ("ok_per_s", "p50_ms", "p99_ms"):
            out[f"{kind}_{figure}"] = round(statistics.median(r[kind][figure] for r in rows), 2)
        for result in ("ok", "fail", "info"):
            out[f"{kind}_{result}"] = round(statistics.median(r[kind]["outcomes"][result] for r in rows))
        out[f"{kind}_deadlocks"] = round(statistics.median(r[kind]["deadlocks"] for r in rows))
    out["harness_over_bare"] = round(statistics.median(r["harness"]["ok_per_s"] / r["bare"]["ok_per_s"]
                                                       if r["bare"]["ok_per_s"] else 0.0 for r in rows), 3)
    out["all_valid"] = all(r["harness"]["valid"] is True for r in rows)
    print(json.dumps(out), flush=True)
