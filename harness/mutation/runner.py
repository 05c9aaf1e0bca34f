"""Run one ``fencepost test`` against a scratch copy of the system's code, and read what it found.

The test runs as a child process, ``python -P -m harness.cli.main test ...`` with the scratch copy's
root first on ``PYTHONPATH`` (``-P``: the working directory is not put before it), so the harness
(which imports the system's client code) and the node processes (whose ``PYTHONPATH`` the backend
takes from the system's code folders, found through the imported package) both run the mutant. The
root of the code ``fencepost mutate`` itself runs comes next (:func:`child_env`), so the child's harness,
checkers and faults are the parent's, not those of whatever checkout the environment has installed.

The child has a session of its own, so a Ctrl-C at the terminal reaches only ``fencepost mutate``,
which passes one SIGINT on and waits while the child tears its cluster down (then SIGTERM, then
SIGKILL and ``fencepost cluster down --store``). On Linux the child starts with SIGINT at its default
(even when ``fencepost mutate`` was started with it ignored) and is told to get SIGTERM should
``fencepost mutate`` die (a SIGKILL), which tears its cluster down as Ctrl-C does.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import orjson

from harness.cli.exit_codes import ERROR, INVALID, UNKNOWN, VALID

NEMESIS = "nemesis"
START_PREFIX = "start-"
MAX_FAULT_EVENTS = 40
INTERRUPT_GRACE_S = 90.0
TERM_GRACE_S = 30.0
OUTPUT_TAIL = 2000
TEST_OUTPUT = "fencepost-test.out"
"""The child's output, kept in its run folder."""

CAUGHT, PASSED, BROKEN, ERRORED, UNSURE, TIMED_OUT = "caught", "passed", "broken-start", "error", "unknown", "timeout"
"""A run's outcome: it exited 1; exited 0; never got to the workload (exit 3 or no client operation);
exited 3 after the workload started (or died of a signal); exited 2; was stopped after its deadline."""


@dataclass
class RunResult:
    """One test run of one mutant.

    Attributes:
        seed: the test's seed.
        package: None for the campaign as given (the system's default one without ``--nemesis``), else
            the one fault package this run had alone (``--per-package``).
        exit_code: the child's exit status; None when it was stopped after its deadline.
        run: the run folder, when one was created.
        client_ops: client operations in the history (0: the workload never started).
        first_anomaly_s: test seconds to the first evidence (results.json's ``detection``), when caught.
        test_end_s: test seconds of the history's last operation: the latest any evidence can be.
        time_limit_s: the run's ``--time-limit`` (its test.json), the length of the campaign that ran.
        checkers: the checkers that failed.
        faults: started fault actions, by package.
        fault_events: the first fault actions: ``{"at_s", "f", "value"}``.
        wall_s: wall-clock seconds of the whole child.
        output: the end of the child's output, when it did not end valid or invalid.
    """

    seed: int
    package: str | None
    exit_code: int | None
    run: str | None = None
    client_ops: int = 0
    first_anomaly_s: float | None = None
    test_end_s: float | None = None
    time_limit_s: float | None = None
    checkers: list[str] = field(default_factory=list)
    faults: dict[str, int] = field(default_factory=dict)
    fault_events: list[dict[str, Any]] = field(default_factory=list)
    wall_s: float = 0.0
    output: str = ""

    @property
    def outcome(self) -> str:
        """:data:`CAUGHT`, :data:`PASSED`, :data:`BROKEN`, :data:`ERRORED`, :data:`UNSURE` or :data:`TIMED_OUT`."""
        if self.exit_code is None:
            return TIMED_OUT
        if self.client_ops == 0 and self.exit_code in (VALID, INVALID, UNKNOWN, ERROR):
            return BROKEN
        return {VALID: PASSED, INVALID: CAUGHT, UNKNOWN: UNSURE}.get(self.exit_code, ERRORED)

    @property
    def evidence_s(self) -> float | None:
        """When a catch's first evidence came, in test seconds: the checkers' ``first_anomaly_s``, at most the
        run's time limit; else, for a checker that cites no time (convergence, which judges the state after
        the heal; log-pattern, on logs whose lines carry no timestamp), the run's time limit; else the
        history's last operation. Evidence from after the time limit (a final read, the recovery checker's
        retries) and evidence with no time both come from the campaign of that length, which caught it."""
        if self.first_anomaly_s is not None:
            return self.first_anomaly_s if self.time_limit_s is None else min(self.first_anomaly_s,
                                                                               self.time_limit_s)
        return self.time_limit_s if self.time_limit_s is not None else self.test_end_s

    def caught_within(self, seconds: float) -> bool:
        """Caught, with the first evidence at most ``seconds`` of test time in (:attr:`evidence_s`)."""
        return self.outcome == CAUGHT and self.evidence_s is not None and self.evidence_s <= seconds

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready, with the outcome."""
        return {**asdict(self), "outcome": self.outcome}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunResult:
        """Read one back (the outcome is recomputed)."""
        return cls(**{k: v for k, v in data.items() if k != "outcome"})


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """In the child: get SIGTERM when the parent dies (Linux's PR_SET_PDEATHSIG), so a SIGKILLed
    ``fencepost mutate`` does not leave its test running."""
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)


def child_setup() -> None:  # pragma: no cover - runs in the child between fork and exec
    """In the child: SIGINT back to its default, so that the SIGINT :func:`stop` sends ends the test even when
    ``fencepost mutate`` runs with SIGINT ignored (a shell starts its background commands so, and Python
    keeps an ignored SIGINT ignored); then :func:`_die_with_parent`."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    _die_with_parent()


def run_folders(store: Path) -> set[Path]:
    """Every run folder in the store now (``STORE/<test>/<stamp>``)."""
    if not store.is_dir():
        return set()
    return {r for t in store.iterdir() if t.is_dir() and not t.is_symlink() for r in t.iterdir()
            if r.is_dir() and (r / "test.json").exists()}


@dataclass
class HistoryFacts:
    """What a run's history says: client operations, the fault actions started (by package, and the first
    ones), and the test seconds of its last operation."""

    client_ops: int = 0
    faults: Counter[str] = field(default_factory=Counter)
    events: list[dict[str, Any]] = field(default_factory=list)
    end_s: float | None = None


def read_history(path: Path) -> HistoryFacts:
    """The facts of a history (unreadable lines are skipped: a killed run may have torn its last one)."""
    facts = HistoryFacts()
    if not path.exists():
        return facts
    faults, events = facts.faults, facts.events
    end_ns = None
    with open(path, "rb") as fh:
        for raw in fh:
            try:
                op = orjson.loads(raw)
            except orjson.JSONDecodeError:
                continue
            if not isinstance(op, dict):
                continue
            if isinstance(op.get("time"), int):
                end_ns = max(end_ns or 0, op["time"])
            if op.get("process") != NEMESIS:
                facts.client_ops += op.get("type") == "invoke"
                continue
            f = str(op.get("f", ""))
            if op.get("type") == "invoke" or not f.startswith(START_PREFIX):
                continue
            faults[f[len(START_PREFIX):]] += 1
            if len(events) < MAX_FAULT_EVENTS:
                events.append({"at_s": round(int(op.get("time", 0)) / 1e9, 1), "f": f, "value": op.get("value")})
    facts.end_s = None if end_ns is None else round(end_ns / 1e9, 3)
    return facts


def annotate(run: Path, fields: dict[str, Any]) -> None:
    """Add ``fields`` (campaign, case, mutant) to the run's results.json, as the checks would have
    written them had the test been given them, and write them to ``mutant.json`` beside it too."""
    (run / "mutant.json").write_text(json.dumps(fields, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    results = run / "results.json"
    if not results.exists():
        return
    data = json.loads(results.read_text(encoding="utf-8"))
    data.update(fields)
    tmp = run / ".results.json.mutate"
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, results)


def stop(proc: subprocess.Popen[bytes], store: Path, *, env: dict[str, str] | None = None,
         grace_s: float = INTERRUPT_GRACE_S, term_grace_s: float = TERM_GRACE_S) -> None:
    """End the child as Ctrl-C would: one SIGINT and a wait while it tears down; then SIGTERM; then
    SIGKILL of its process group and ``fencepost cluster down --store`` for what it left, run with ``env``
    (the child's environment, so the harness that started the cluster tears it down)."""
    for sig, wait_s in ((signal.SIGINT, grace_s), (signal.SIGTERM, term_grace_s)):
        if proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(wait_s)
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        with contextlib.suppress(Exception):
            subprocess.run([sys.executable, "-P", "-m", "harness.cli.main", "cluster", "down", "--store", str(store)],
                           env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=120, check=False)


def test_command(args: Sequence[str], seed: int, store: Path) -> list[str]:
    """The child's command line: ``fencepost test ARGS --seed SEED --store STORE``."""
    return [sys.executable, "-P", "-m", "harness.cli.main", "test", *args, "--seed", str(seed), "--store", str(store)]


CODE_ROOT = Path(__file__).resolve().parents[2]
"""The folder that holds the ``harness`` package this process runs."""


def child_env(scratch_root: Path, code_root: Path = CODE_ROOT) -> dict[str, str]:
    """The environment of a test run against the mutant under ``scratch_root``: that copy first on
    ``PYTHONPATH``, then ``code_root`` (the rest of the code), then any ``PYTHONPATH`` already set."""
    env = dict(os.environ)
    before = [env["PYTHONPATH"]] if env.get("PYTHONPATH") else []
    env["PYTHONPATH"] = os.pathsep.join([str(scratch_root), str(code_root), *before])
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def run_one(scratch_root: Path, args: Sequence[str], seed: int, store: Path, *, package: str | None,
            deadline_s: float, log_path: Path, on_start: Callable[[int], None] | None = None) -> RunResult:
    """Run ``fencepost test ARGS`` at ``seed`` into ``store`` against the code under ``scratch_root``.

    ``on_start`` is told the child's pid. A KeyboardInterrupt stops the child (:func:`stop`) and
    propagates.
    """
    env = child_env(scratch_root)
    before = run_folders(store)
    started = time.monotonic()
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(test_command(args, seed, store), env=env, stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True,
                                preexec_fn=child_setup if sys.platform == "linux" else None)
        if on_start is not None:
            on_start(proc.pid)
        code: int | None
        try:
            code = proc.wait(deadline_s)
        except subprocess.TimeoutExpired:
            stop(proc, store, env=env)
            code = None
        except BaseException:
            stop(proc, store, env=env)
            raise
    result = RunResult(seed, package, code, wall_s=round(time.monotonic() - started, 1))
    new = sorted(run_folders(store) - before, key=lambda p: p.name)
    if new:
        run = new[-1]
        result.run = str(run)
        facts = read_history(run / "history.jsonl")
        result.client_ops, result.fault_events, result.test_end_s = facts.client_ops, facts.events, facts.end_s
        result.faults = dict(facts.faults.most_common())
        with contextlib.suppress(OSError, ValueError, TypeError):
            limit = json.loads((run / "test.json").read_text(encoding="utf-8")).get("time_limit")
            result.time_limit_s = float(limit) if limit is not None else None
        with contextlib.suppress(OSError, ValueError):
            detection = json.loads((run / "results.json").read_text(encoding="utf-8")).get("detection") or {}
            result.first_anomaly_s = detection.get("first_anomaly_s")
            result.checkers = list(detection.get("checkers", []))
        with contextlib.suppress(OSError):
            shutil.copyfile(log_path, run / TEST_OUTPUT)
    if result.outcome not in (PASSED, CAUGHT):
        result.output = log_path.read_bytes()[-OUTPUT_TAIL:].decode("utf-8", "replace")
    return result
