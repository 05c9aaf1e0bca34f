"""``fencepost bench txn``: the transactional checker on list-append histories of 10k, 100k and 1M transactions.

Each history comes from the generator (:mod:`checkers.gen_history_txn`): 50 processes, 1 to 7 micro-ops per
transaction (4 on average), Fencepost's default key pool. Each is checked as strict-serializable the way
``fencepost check --model list-append`` checks a file: read (and validated) from JSONL with each op's line
(kept apart from the ops: ``load_history(line_numbers=...)``), then :func:`checkers.txn.check_txn`. Every
check runs in a fresh child process, so that its peak RSS (``getrusage`` in the child) is its own and not
the largest size's. Sizes below a million are checked ``--runs`` times, medians reported; the largest once.

Options (after ``fencepost bench txn``): ``--sizes 10000,100000`` (a quick run), ``--processes N``,
``--txn-length N``, ``--consistency M[,M...]``, ``--keep DIR`` (keep the generated histories there).

Progress goes to stdout; the last line is one JSON object: ``txns``, ``seconds`` (read plus check),
``txns_per_s`` and ``peak_rss_mib`` of the largest size, and ``sizes``: the same figures, the split
between reading and checking, and the generator's time, at each size.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from array import array
from pathlib import Path
from typing import Any

from harness.cli.bench_cmd import bench_option

SIZES = (10_000, 100_000, 1_000_000)
PROCESSES = 50
TXN_LENGTH = 7
"""Micro-ops per transaction are drawn from 1 to this, uniformly: 4 on average."""
ONCE_FROM = 1_000_000
"""Sizes from this on are checked once, whatever ``--runs`` says."""
WORKLOAD = "list-append"


def _options(args: list[str]) -> dict[str, Any]:
    """The bench's options from its arguments; a bad one is one line and exit 3."""
    from harness.cli.errors import fail

    try:
        sizes = [int(s) for s in bench_option(args, "--sizes", ",".join(map(str, SIZES))).split(",") if s.strip()]
        processes = int(bench_option(args, "--processes", str(PROCESSES)))
        length = int(bench_option(args, "--txn-length", str(TXN_LENGTH)))
    except ValueError as e:
        fail(f"bench txn: {e}")
    if not sizes or min(sizes) < 1 or processes < 1 or length < 1:
        fail("bench txn: --sizes, --processes and --txn-length must be positive")
    consistency = [m for m in bench_option(args, "--consistency", "strict-serializable").split(",") if m]
    keep = bench_option(args, "--keep", "")
    return {"sizes": sorted(sizes), "processes": processes, "txn_length": length, "consistency": consistency,
            "keep": keep or None}


def _check_in_child(path: Path, consistency: list[str]) -> dict[str, Any]:
    """Read and check ``path`` in a fresh process; its figures (see :func:`child`)."""
    argv = [sys.executable, "-m", "checkers.bench_txn", "--child", str(path), ",".join(consistency)]
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if proc.returncode != 0 or not proc.stdout.strip():
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"checking {path.name} failed (exit {proc.returncode}): {tail}")
    figures: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    figures["wall_s"] = round(wall, 3)
    return figures


def child(path: str, consistency: list[str]) -> dict[str, Any]:
    """Read ``path`` and check it, as ``fencepost check --model list-append`` does; the figures.

    Returns:
        ``read_s``, ``check_s``, ``seconds`` (their sum), ``peak_rss_mib`` (this process's), ``txns``,
        ``valid`` and ``anomaly_types``.
    """
    from checkers.txn import check_txn
    from harness.history.formats import load_history

    start = time.perf_counter()
    lines = array("q")
    ops = load_history(path, line_numbers=lines)
    read = time.perf_counter() - start
    result = check_txn(ops, WORKLOAD, consistency, source=path, lines=lines)
    checked = time.perf_counter() - start - read
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    return {"read_s": round(read, 3), "check_s": round(checked, 3), "seconds": round(read + checked, 3),
            "peak_rss_mib": round(rss, 1), "txns": result["txns"], "valid": result["valid"],
            "anomaly_types": result["anomaly_types"]}


def _size(size: int, runs: int, opts: dict[str, Any], folder: Path) -> dict[str, Any]:
    """Generate a history of ``size`` transactions and check it ``runs`` times (once for the largest)."""
    from checkers.gen_history_txn import TxnHistoryGenerator, write_txn_jsonl

    path = folder / f"{WORKLOAD}-{size}.jsonl"
    start = time.perf_counter()
    gen = TxnHistoryGenerator(WORKLOAD, txns=size, processes=opts["processes"], txn_length=opts["txn_length"],
                              seed=size)
    events = write_txn_jsonl(gen, path)
    generated = time.perf_counter() - start
    mib = path.stat().st_size / 2**20
    print(f"{size} txns: generated {events} events, {mib:.1f} MiB, in {generated:.2f}s", flush=True)
    samples = []
    for k in range(1 if size >= ONCE_FROM else runs):
        got = _check_in_child(path, opts["consistency"])
        samples.append(got)
        print(f"{size} txns: run {k + 1}: read {got['read_s']:.2f}s + check {got['check_s']:.2f}s = "
              f"{got['seconds']:.2f}s, peak RSS {got['peak_rss_mib']:.0f} MiB, valid {got['valid']}", flush=True)
    if opts["keep"] is None:
        path.unlink()
    seconds = statistics.median(s["seconds"] for s in samples)
    figures = {
        "txns": samples[0]["txns"],
        "runs": len(samples),
        "seconds": round(seconds, 3),
        "read_s": round(statistics.median(s["read_s"] for s in samples), 3),
        "check_s": round(statistics.median(s["check_s"] for s in samples), 3),
        "txns_per_s": round(samples[0]["txns"] / max(seconds, 1e-9)),
        "us_per_txn": round(seconds / max(samples[0]["txns"], 1) * 1e6, 2),
        "peak_rss_mib": max(s["peak_rss_mib"] for s in samples),
        "valid": samples[0]["valid"],
        "anomaly_types": samples[0]["anomaly_types"],
        "generate_s": round(generated, 3),
        "events": events,
        "file_mib": round(mib, 1),
    }
    return figures


def main(runs: int, args: list[str]) -> None:
    """Generate and check each size, printing progress, then one JSON line of figures."""
    opts = _options(args)
    figures: dict[str, Any] = {"workload": WORKLOAD, "consistency": opts["consistency"],
                               "processes": opts["processes"], "txn_length_max": opts["txn_length"],
                               "loadavg_before": round(os.getloadavg()[0], 2)}
    sizes: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="fencepost-bench-txn-") as tmp:
        folder = Path(opts["keep"] or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        for size in opts["sizes"]:
            try:
                sizes[str(size)] = _size(size, runs, opts, folder)
            except RuntimeError as e:
                print(f"{size} txns: {e}", flush=True)
                sizes[str(size)] = {"error": str(e)}
    largest = sizes[str(opts["sizes"][-1])]
    for name in ("txns", "seconds", "txns_per_s", "peak_rss_mib", "read_s", "check_s", "valid"):
        figures[name] = largest.get(name)
    smallest = sizes[str(opts["sizes"][0])]
    if len(sizes) > 1 and "us_per_txn" in smallest and "us_per_txn" in largest:
        # The cost of a transaction at the largest size over that at the smallest: 1.0 is linear.
        figures["growth"] = round(largest["us_per_txn"] / max(smallest["us_per_txn"], 1e-9), 2)
    figures["sizes"] = sizes
    figures["loadavg_after"] = round(os.getloadavg()[0], 2)
    print(json.dumps(figures), flush=True)
    if any("error" in s for s in sizes.values()):
        sys.exit(3)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        print(json.dumps(child(sys.argv[2], [m for m in sys.argv[3].split(",") if m])), flush=True)
    else:
        sys.exit("usage: fencepost bench txn [--sizes N,N...] (this module's --child is the bench's own)")
