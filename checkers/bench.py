"""``fencepost bench checker``: the linearizability checker against Porcupine's published times.

(``--suite hard``: Porcupine's hardest histories as one partition, memory, witnesses, and a baseline
checkout, in :mod:`checkers.bench_hard`; ``--suite calibrate`` refits the difficulty estimate.)

Two suites, each timed as one cold ``fencepost check`` process (start-up included), ``runs`` times:

* the 108 non-empty Porcupine histories (Porcupine, Go: 0.68 s on the 2-core reference machine);
* kv c10-ok + c10-bad with ``--no-partition`` (Porcupine, Go: 4.0 s).

Peers measured in the same run, in this process:

* model-guided pruning on and off, on kv c50-ok (search nodes and seconds; the suite's slowest file);
* the unique-values register fast path against the general search on one generated history.

Progress goes to stdout; the last line is one JSON object of medians, with the load average seen
before and after each suite (other work on the machine slows every figure).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

PORCUPINE_GO = {"porcupine_108": 0.68, "kv_c10_no_partition": 4.0}
"""Porcupine's wall times on the reference machine, in seconds."""


def _data_dir(args: list[str]) -> Path:
    for a in args:
        if a.startswith("--data="):
            return Path(a.split("=", 1)[1])
    here = Path(__file__).resolve().parents[1]
    return here.parent / "shared" / "data" / "porcupine"


def _time_cli(argv: list[str]) -> tuple[float, int]:
    exe = Path(sys.executable).with_name("fencepost")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "harness.cli.main"]
    start = time.perf_counter()
    proc = subprocess.run([*cmd, *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    return time.perf_counter() - start, proc.returncode


def _fast_vs_search(ops: int) -> tuple[float, float]:
    from checkers.gen_history import HistoryGenerator
    from checkers.linearizability.checker import check_calls
    from checkers.models import make_model
    from harness.history.pairing import pair_calls

    calls = pair_calls(list(HistoryGenerator(ops, keys=10, processes=10, unique_values=True, seed=1)))
    times = []
    for fast in (True, False):
        start = time.perf_counter()
        result = check_calls(calls, make_model("register"), fast=fast, workers=1)
        times.append(time.perf_counter() - start)
        assert result.valid is True
    return times[0], times[1]


def _guided_peer(path: Path) -> dict[str, tuple[int, float]]:
    """Search nodes and seconds to check ``path`` (kv) with and without model guidance."""
    from checkers.linearizability.checker import PartitionCheck
    from checkers.models import make_model
    from harness.history.formats import load_history
    from harness.history.pairing import pair_calls

    calls = pair_calls(load_history(path))
    out = {}
    for guided in (True, False):
        start = time.perf_counter()
        nodes = 0
        for part in make_model("kv").partition(calls):
            check = PartitionCheck(part, guided=guided)
            assert check.advance() is True
            nodes += check.verdict.nodes
        out["guided" if guided else "unguided"] = (nodes, time.perf_counter() - start)
    return out


def main(runs: int, args: list[str]) -> None:
    """Run both suites ``runs`` times and print progress, then one JSON line of medians.

    ``--suite hard`` runs :mod:`checkers.bench_hard` instead (c50 as one partition, memory, witnesses,
    and a baseline checkout); ``--suite calibrate`` refits the difficulty estimate.
    """
    data = _data_dir(args)
    suite = next((a.split("=", 1)[1] for a in args if a.startswith("--suite=")), None)
    if "--suite" in args[:-1]:
        suite = args[args.index("--suite") + 1]
    if suite in ("hard", "calibrate"):
        from checkers import bench_hard

        bench_hard.main(runs, args, data) if suite == "hard" else bench_hard.calibrate(data)
        return
    files = sorted(str(p) for p in (data / "jepsen").glob("*.log"))
    files += sorted(str(p) for p in (data / "kv").glob("*.txt"))
    files = [f for f in files if os.path.getsize(f) > 0]
    suites = {
        "porcupine_108": files,
        "kv_c10_no_partition": ["--no-partition", str(data / "kv" / "c10-ok.txt"), str(data / "kv" / "c10-bad.txt")],
    }
    figures: dict[str, object] = {"runs": runs, "files": len(files)}
    for name, argv in suites.items():
        figures[f"{name}_loadavg_before"] = round(os.getloadavg()[0], 2)
        samples = []
        for k in range(runs):
            seconds, code = _time_cli(["check", *argv])
            if code not in (0, 1):
                print(f"{name}: run {k + 1} failed with exit code {code}", flush=True)
                figures[f"{name}_error"] = code
            samples.append(seconds)
            print(f"{name}: run {k + 1}/{runs}: {seconds:.3f}s (exit {code})", flush=True)
        med = statistics.median(samples)
        figures[f"{name}_s"] = round(med, 3)
        figures[f"{name}_porcupine_go_s"] = PORCUPINE_GO[name]
        figures[f"{name}_vs_porcupine"] = round(med / PORCUPINE_GO[name], 3)
        figures[f"{name}_loadavg_after"] = round(os.getloadavg()[0], 2)
    peer: dict[str, list[tuple[int, float]]] = {"guided": [], "unguided": []}
    for k in range(runs):
        for mode, figure in _guided_peer(data / "kv" / "c50-ok.txt").items():
            peer[mode].append(figure)
        print(f"c50-ok guided vs unguided: run {k + 1}/{runs}: {peer['guided'][-1][1]:.3f}s "
              f"({peer['guided'][-1][0]} nodes) vs {peer['unguided'][-1][1]:.3f}s ({peer['unguided'][-1][0]} nodes)",
              flush=True)
    medians = {}
    for mode, runs_of_mode in peer.items():
        figures[f"c50_ok_{mode}_nodes"] = runs_of_mode[0][0]
        medians[mode] = statistics.median(seconds for _, seconds in runs_of_mode)
        figures[f"c50_ok_{mode}_s"] = round(medians[mode], 3)
    figures["guided_speedup"] = round(medians["unguided"] / max(medians["guided"], 1e-9), 2)
    fast, slow = [], []
    for k in range(runs):
        f, s = _fast_vs_search(20_000)
        fast.append(f)
        slow.append(s)
        print(f"fast path vs search (20000 ops, unique values): run {k + 1}/{runs}: {f:.3f}s vs {s:.3f}s", flush=True)
    figures["fast_path_20k_s"] = round(statistics.median(fast), 3)
    figures["general_search_20k_s"] = round(statistics.median(slow), 3)
    figures["fast_path_speedup"] = round(statistics.median(slow) / max(statistics.median(fast), 1e-9), 2)
    figures["loadavg_1m"] = round(os.getloadavg()[0], 2)
    print(json.dumps(figures), flush=True)
