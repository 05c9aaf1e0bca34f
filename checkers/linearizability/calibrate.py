"""Refit the difficulty estimate (:mod:`checkers.linearizability.estimate`) on measured searches.

Samples: every partition of Porcupine's 108 histories (as checked: split by key), the kv histories
but c50 checked as one unsplit partition, and generated single-key cas-register histories of 5 to 40
processes with 0 to 20% info ops. For each independent part searched, the search steps and seconds
are measured and fitted, by least squares on log10(steps), to ``A + B*log10(n) + C*c + D*k``.
Searches that run out of their budget are left out of the fit and counted.
"""

from __future__ import annotations

import csv
import math
import statistics
import time
from pathlib import Path
from typing import Any

from checkers.linearizability.estimate import measure

GENERATED = [(procs, info, seed) for procs in (5, 10, 20, 40) for info in (0.0, 0.05, 0.2) for seed in (1, 2)]
"""(processes, info rate, seed) of the generated single-key histories, 300 ops each."""


def _parts(check: Any) -> list[tuple[list[Any], int, bool]]:
    """Each independently searched part of a finished check: its calls, steps, and whether decided."""
    from checkers.linearizability.components import SplitSearch

    search = check.search
    if isinstance(search, SplitSearch):
        return [([check.entries[i].call for i in g], s.nodes, s.valid is not None)
                for g, s in zip(search.groups, search.searches, strict=True)]
    return [([e.call for e in check.entries], check.verdict.nodes, check.verdict.valid in (True, False))]


def samples(data: Path, budget: float = 10.0) -> list[dict[str, Any]]:
    """Measured searches: ``n``, ``c``, ``k``, ``steps``, ``seconds``, ``decided``, ``label``."""
    from checkers.gen_history import HistoryGenerator
    from checkers.linearizability.checker import PartitionCheck
    from checkers.models import choose_model, make_model
    from checkers.models.base import Partition
    from harness.history.formats import load_history
    from harness.history.pairing import pair_calls

    jobs: list[tuple[str, Partition, bool]] = []
    with open(data / "expected.tsv", encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(fh, delimiter="\t") if r["expected"] != "empty"]
    for r in rows:
        fmt = "porcupine-etcd" if r["path"].startswith("jepsen") else "porcupine-kv"
        calls = pair_calls(load_history(data / r["path"], fmt))
        model = make_model(choose_model(fmt, {c.f for c in calls}))
        jobs += [(f"{r['path']}:{p.label}", p, True) for p in model.partition(calls)]
        if fmt == "porcupine-kv" and "c50" not in r["path"]:
            jobs.append((f"{r['path']} unsplit", Partition(None, make_model("kv"), calls), False))
    for procs, info, seed in GENERATED:
        calls = pair_calls(list(HistoryGenerator(300, keys=1, processes=procs, seed=seed, info_rate=info)))
        jobs.append((f"generated p{procs} i{info} s{seed}", make_model("cas-register").partition(calls)[0], True))
    out = []
    for label, part, split in jobs:
        started = time.perf_counter()
        check = PartitionCheck(part, split=split)
        check.advance(None, time.monotonic() + budget)
        seconds = time.perf_counter() - started
        for calls, steps, decided in _parts(check):
            n, c, k = measure(calls)
            out.append({"label": label, "n": n, "c": c, "k": k, "steps": steps, "decided": decided,
                        "seconds": seconds})
    return out


def fit(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The least-squares coefficients over the decided samples, with the errors in decades."""
    import numpy as np

    used = [r for r in rows if r["decided"] and r["steps"] > 0 and r["n"] > 0]
    x = np.array([[1.0, math.log10(r["n"]), r["c"], r["k"]] for r in used])
    y = np.array([math.log10(r["steps"]) for r in used])
    coef = np.linalg.lstsq(x, y, rcond=None)[0]
    err = np.abs(x @ coef - y)
    per_step = [r["seconds"] / r["steps"] for r in used if r["steps"] >= 1000]
    return {"A": round(float(coef[0]), 3), "B": round(float(coef[1]), 3), "C": round(float(coef[2]), 4),
            "D": round(float(coef[3]), 4), "samples": len(used), "left_out": len(rows) - len(used),
            "median_error_decades": round(float(np.median(err)), 2),
            "p90_error_decades": round(float(np.percentile(err, 90)), 2),
            "seconds_per_step": float(f"{statistics.median(per_step):.2g}") if per_step else None}
