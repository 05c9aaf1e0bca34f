"""``fencepost bench local``: ok ops/s through the whole harness on the local backend, no faults.

Each run is a full ``fencepost test`` lifecycle (register workload, concurrency 16, no rate limit):
set up a 3-node cluster, drive it, tear down, check. Figures are medians over ``--runs``. As a peer
measured in the same process, the same workload is also run with concurrency 1, so the scaling ratio
does not depend on how loaded the machine is.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
from typing import Any

import click


def _one(concurrency: int, seconds: float, store: str, seed: int) -> dict[str, Any]:
    from harness.config import TestConfig
    from harness.launch import run_test

    config = TestConfig(workload="register", nemesis=[], concurrency=concurrency, rate=0, time_limit=seconds,
                        recovery=0.5, seed=seed, name=f"bench-local-c{concurrency}")
    outcome = run_test(config, store)
    return {"ok_ops": outcome.ok_ops, "ok_per_s": outcome.ok_ops / seconds, "valid": outcome.valid}


def main(runs: int = 3, args: list[str] | None = None) -> None:
    """Run the benchmark and print one JSON line of figures last."""
    seconds = float((args or ["15"])[0]) if args else 15.0
    per_run: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="fencepost-bench-local-") as store:
        for i in range(runs):
            c16 = _one(16, seconds, store, seed=100 + i)
            c1 = _one(1, seconds, store, seed=200 + i)
            per_run.append({"c16": c16, "c1": c1})
            click.echo(f"run {i + 1}/{runs}: c16 {c16['ok_per_s']:.0f} ok/s (valid={c16['valid']}), "
                       f"c1 {c1['ok_per_s']:.0f} ok/s", err=True)
    c16s = [r["c16"]["ok_per_s"] for r in per_run]
    c1s = [r["c1"]["ok_per_s"] for r in per_run]
    figures = {
        "bench": "local",
        "runs": runs,
        "seconds_per_run": seconds,
        "ok_ops_per_s_c16_median": round(statistics.median(c16s), 1),
        "ok_ops_per_s_c1_median": round(statistics.median(c1s), 1),
        "scaling_c16_over_c1": round(statistics.median(a / b for a, b in zip(c16s, c1s, strict=True) if b), 2),
        "all_valid": all(r["c16"]["valid"] is True and r["c1"]["valid"] is True for r in per_run),
        "target_ok_ops_per_s": 500,
    }
    sys.stdout.write(json.dumps(figures) + "\n")
