"""Realistic run folders for report tests and screenshots: a few hundred ops, several processes,
a partition window and a kill window, checked by the history-only checkers."""

from __future__ import annotations

import random
from typing import Any

from checkers.availability import AvailabilityChecker
from checkers.exceptions import ExceptionsChecker
from checkers.log_pattern import LogPatternChecker
from checkers.perf import PerfChecker
from checkers.stats import StatsChecker
from harness.checker_protocol import CheckContext, Checker, run_checkers
from harness.history.op import NEMESIS, Op, OpType
from harness.store import RunDir, RunStore

MS = 1_000_000
S = 1_000 * MS
PARTITION = (3 * S, 6 * S)
KILL = (8 * S, 9 * S)
DURATION = 12 * S


def _in(t: int, window: tuple[int, int]) -> bool:
    return window[0] <= t <= window[1]


def sample_history(seed: int = 7, concurrency: int = 5, keys: int = 3) -> list[Op]:
    """A register workload's history with a partition from 3 s to 6 s and a kill from 8 s to 9 s."""
    rng = random.Random(seed)
    events: list[tuple[int, int, dict[str, Any]]] = []  # (time, tiebreak, fields)
    seq = 0

    def add(t: int, **fields: Any) -> None:
        nonlocal seq
        events.append((t, seq, fields))
        seq += 1

    for faulted, (start, stop) in (("partition", PARTITION), ("kill", KILL)):
        add(start, process=NEMESIS, type="invoke", f=f"start-{faulted}", value=["n1", "n2"] if faulted == "kill"
            else {"n1": ["n3", "n4", "n5"], "n2": ["n3", "n4", "n5"]})
        add(start + 12 * MS, process=NEMESIS, type="info", f=f"start-{faulted}", value="done")
        add(stop, process=NEMESIS, type="invoke", f=f"stop-{faulted}", value=None)
        add(stop + 20 * MS, process=NEMESIS, type="info", f=f"stop-{faulted}", value="healed")
    values = dict.fromkeys(range(keys), 0)
    for worker in range(concurrency):
        process = worker
        t = rng.randrange(0, 40 * MS)
        while t < DURATION:
            key = rng.randrange(keys)
            f = rng.choices(["read", "write", "cas"], [5, 3, 2])[0]
            arg: Any = None if f == "read" else rng.randrange(10) if f == "write" else [rng.randrange(10),
                                                                                        rng.randrange(10)]
            faulty = _in(t, PARTITION) or _in(t, KILL)
            latency = int(rng.lognormvariate(1.3, 0.5) * MS)
            kind, out, err = "ok", None, None
            if faulty and rng.random() < 0.45:
                kind, latency, err = "info", 500 * MS + rng.randrange(20 * MS), "timeout after 500 ms"
            elif faulty and rng.random() < 0.3:
                kind, err = "fail", "ConnectionRefusedError: [Errno 111] Connection refused"
            if kind == "ok":
                if f == "read":
                    out = values[key]
                elif f == "write":
                    values[key] = arg
                    out = arg
                elif values[key] == arg[0]:
                    values[key], out = arg[1], arg
                else:
                    kind, err, out = "fail", "precondition failed", arg
            add(t, process=process, type="invoke", f=f, key=key, value=arg)
            fields: dict[str, Any] = {"process": process, "type": kind, "f": f, "key": key,
                                      "value": out if kind != "info" else None}
            if err:
                fields["error"] = err
            add(t + latency, **fields)
            t += latency + rng.randrange(60 * MS, 260 * MS)
            if kind == "info":
                process += concurrency
    events.sort(key=lambda e: (e[0], e[1]))
    ops = []
    for i, (t, _, fields) in enumerate(events):
        ops.append(Op(index=i, time=t, process=fields["process"], type=OpType(fields["type"]), f=fields["f"],
                      key=fields.get("key"), value=fields.get("value"), error=fields.get("error")))
    return ops


CONFIG: dict[str, Any] = {
    "name": "register-partition", "workload": "register", "nemesis": ["partition", "kill"],
    "nodes": ["n1", "n2", "n3", "n4", "n5"], "backend": "local", "seed": 7, "time_limit": 12,
    "concurrency": 5, "rate": 40, "bug": None,
}

LINEARIZABILITY_EXPLANATION = """\
Key 1 is not linearizable.
  process 3  write 4        [4.112 s, 4.118 s]  ok
  process 7  read -> 2      [4.120 s, 4.126 s]  ok
No order of these calls is legal: the read began after write 4 completed, yet it saw 2,
a value that write 4 had already overwritten. The partition (3.0 s to 6.0 s) was in force;
node n1 was on the minority side and still answered the read from its stale copy."""

COUNTEREXAMPLE_HTML = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>counterexample</title>
<link rel="icon" href="data:,"></head><body style="font-family:sans-serif">
<h3>Key 1: no linearization</h3><p>write 4 (p3) ok, then read &rarr; 2 (p7) ok: stale read.</p></body></html>
"""


def make_run(store: RunStore, *, invalid: bool = False, name: str | None = None, seed: int = 7,
             campaign: str | None = None, case: str | None = None) -> RunDir:
    """Create a checked run in ``store`` (invalid: a failed linearizability result and a node traceback).

    Checkers draw nothing: the report draws the perf plots and the timeline when it renders the run.
    """
    config = dict(CONFIG, seed=seed, name=name or ("register-stale-read" if invalid else "register-partition"))
    if invalid:
        config["bug"] = "stale-read-on-minority"
    run = store.create_run(config["name"], config)
    history = sample_history(seed)
    with run.history_writer() as writer:
        for op in history:
            writer.write(op)
    node_log = run.node_dir("n1") / "node.log"
    lines = ["2024-05-01 12:00:00,001 INFO n1 listening on 127.0.0.1:7001",
             "2024-05-01 12:00:03,010 ERROR n1 peer n3 unreachable: connection timed out"]
    if invalid:
        lines += ["2024-05-01 12:00:08,002 ERROR n1 request handler failed",
                  "Traceback (most recent call last):",
                  '  File "system/replica.py", line 88, in handle', "    reply = self.serve(req)",
                  "KeyError: 'lease'"]
    node_log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (run.node_dir("n2") / "node.log").write_text("2024-05-01 12:00:00,002 INFO n2 listening\n", encoding="utf-8")
    checkers: list[Checker] = [StatsChecker(), ExceptionsChecker(), PerfChecker(), AvailabilityChecker(),
                               LogPatternChecker()]
    results = run_checkers(checkers, history, CheckContext(test=config, run_dir=run.path))
    if invalid:
        (run.path / "linearizability").mkdir()
        (run.path / "linearizability" / "key-1.html").write_text(COUNTEREXAMPLE_HTML, encoding="utf-8")
        results["checkers"]["linearizability"] = {
            "valid": False, "model": "register", "keys": 3, "seconds": 0.41,
            "explanation": LINEARIZABILITY_EXPLANATION,
            "per_key": {"0": {"valid": True}, "1": {"valid": False, "explanation": "stale read of 2 after write 4"},
                        "2": {"valid": True}},
            "counterexample": {"key": 1, "html": "linearizability/key-1.html"},
        }
        results["valid"] = False
    if campaign is not None:
        results["campaign"] = campaign
        results["case"] = case or f"{config['workload']} / {'+'.join(config['nemesis'])} / {config['bug']}"
    run.write_results(results)
    return run
