"""``fencepost bench checker --suite hard``: the hard histories, memory, witnesses, and the baseline.

Every figure is a cold ``fencepost check`` process (start-up included), timed ``runs`` times, with its
peak resident memory (``wait4``'s ``ru_maxrss``, which covers the processes it forked):

* Porcupine's kv c50-ok and c50-bad, each checked as one partition (``--no-partition --model kv``);
* the same with ``--max-memory 1G --no-split`` (the raw search, kept under the bound), once each;
* the 108-file suite, beside them, and start-up alone (an empty history);
* the 82 invalid files with and without ``--witness`` (what the minimal witnesses cost);
* with ``--million=FILE``: a big history (``gen-history --ops 1000000 --keys 10000 --anomalies 3``).

With ``--baseline=DIR`` (a checkout of an older Fencepost, e.g. ``git worktree add DIR <commit>``),
the 108-file suite, c50 and the big history are also timed with that code, run for run in the same
loop, and the ratios reported. Progress goes to stdout; the last line is one JSON object of medians.
"""

from __future__ import annotations

import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

C50_TIMEOUT = 60.0
"""Seconds a c50 check may take (``--timeout``; the baseline ends unknown there, so it runs once)."""


def _arg(args: list[str], name: str) -> str | None:
    for k, a in enumerate(args):
        if a.startswith(f"--{name}="):
            return a.split("=", 1)[1]
        if a == f"--{name}" and k + 1 < len(args):
            return args[k + 1]
    return None


def run_cli(argv: list[str], code_dir: str | None = None, timeout: float | None = None) -> tuple[float, int, int]:
    """Wall seconds, exit code and peak RSS (bytes) of one cold ``fencepost`` process.

    With ``code_dir``, that checkout's code is imported instead of this one's.
    """
    env = dict(os.environ)
    cwd = None
    if code_dir is not None:
        env["PYTHONPATH"] = code_dir
        cwd = code_dir
    cmd = [sys.executable, "-m", "harness.cli.main", *argv]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
    deadline = None if timeout is None else start + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if deadline is not None and time.perf_counter() > deadline:
            proc.kill()
            pid, status, usage = os.wait4(proc.pid, 0)
            break
        time.sleep(0.005)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - start, proc.returncode, usage.ru_maxrss * 1024


def _median(samples: list[tuple[float, int, int]]) -> dict[str, Any]:
    return {"s": round(statistics.median(s for s, _, _ in samples), 3),
            "rss_mib": round(statistics.median(r for _, _, r in samples) / 2**20, 1),
            "exit": sorted({c for _, c, _ in samples})}


def main(runs: int, args: list[str], data: Path) -> None:
    """Run the hard suite ``runs`` times and print progress, then one JSON line."""
    baseline = _arg(args, "baseline")
    million = _arg(args, "million")
    files = sorted(str(p) for p in (data / "jepsen").glob("*.log"))
    files = [f for f in files + sorted(str(p) for p in (data / "kv").glob("*.txt")) if os.path.getsize(f) > 0]
    with open(data / "expected.tsv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    invalid = [str(data / r["path"]) for r in rows if r["expected"] == "not-linearizable"]
    witness_dir = tempfile.mkdtemp(prefix="fencepost-witness-")
    cases: dict[str, list[str]] = {
        "startup": ["check", str(data / "jepsen" / "etcd_095.log")],  # an empty history: start-up alone
        "c50_ok": ["check", "--no-partition", "--model", "kv", str(data / "kv" / "c50-ok.txt")],
        "c50_bad": ["check", "--no-partition", "--model", "kv", str(data / "kv" / "c50-bad.txt")],
        "suite_108": ["check", *files],
        "invalid_82": ["check", *invalid],
        "invalid_82_witness": ["check", "--witness", witness_dir, *invalid],
    }
    if million:
        cases["million"] = ["check", "--engine", "local", million]
    old = {"startup", "c50_ok", "c50_bad", "suite_108", "million"}
    got: dict[str, list[tuple[float, int, int]]] = {}
    figures: dict[str, Any] = {"suite": "hard", "runs": runs, "files": len(files), "cpus": os.cpu_count(),
                               "loadavg_before": round(os.getloadavg()[0], 2)}
    for k in range(runs):
        for name, argv in cases.items():
            sample = run_cli([*argv, "--timeout", str(C50_TIMEOUT)] if name.startswith("c50") else argv)
            got.setdefault(name, []).append(sample)
            print(f"{name}: run {k + 1}/{runs}: {sample[0]:.3f}s, exit {sample[1]}, "
                  f"peak RSS {sample[2] / 2**20:.0f} MiB", flush=True)
            if baseline and name in old and (k == 0 or not name.startswith("c50")):
                argv_old = [*argv, "--timeout", str(C50_TIMEOUT)] if name.startswith("c50") else argv
                sample = run_cli(argv_old, baseline, timeout=C50_TIMEOUT + 60)
                got.setdefault(f"{name}_baseline", []).append(sample)
                print(f"{name} (baseline): run {k + 1}/{runs}: {sample[0]:.3f}s, exit {sample[1]}, "
                      f"peak RSS {sample[2] / 2**20:.0f} MiB", flush=True)
    for name in ("c50_ok", "c50_bad"):
        sample = run_cli([*cases[name], "--max-memory", "1G", "--no-split", "--timeout", str(C50_TIMEOUT)])
        got[f"{name}_raw_1g"] = [sample]
        print(f"{name} --max-memory 1G --no-split: {sample[0]:.3f}s, exit {sample[1]}, "
              f"peak RSS {sample[2] / 2**20:.0f} MiB", flush=True)
    for name, samples in got.items():
        figures[name] = _median(samples)
    for name in old:
        if f"{name}_baseline" in figures:
            figures[f"{name}_vs_baseline"] = round(figures[name]["s"] / figures[f"{name}_baseline"]["s"], 3)
    if "suite_108_baseline" in figures:
        # Start-up is most of a cold run of small files, and it changes with the whole CLI.
        net, base = (figures[n]["s"] - figures[s]["s"] for n, s in (("suite_108", "startup"),
                                                                      ("suite_108_baseline", "startup_baseline")))
        figures["suite_108_minus_startup_vs_baseline"] = round(net / base, 3) if base > 0 else None
    figures["witness_cost"] = round(figures["invalid_82_witness"]["s"] / figures["invalid_82"]["s"], 3)
    figures["witness_files"] = len(os.listdir(witness_dir))
    figures["loadavg_after"] = round(os.getloadavg()[0], 2)
    print(json.dumps(figures), flush=True)


def calibrate(data: Path) -> None:
    """Refit the difficulty estimate and print the coefficients as one JSON line."""
    from checkers.linearizability.calibrate import fit, samples

    print(json.dumps(fit(samples(data))), flush=True)
