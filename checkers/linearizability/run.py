"""Check history files: load, pair, pick a model, check, and summarise each as plain data.

This is the library behind ``fencepost check``; several files are checked in parallel processes
when there are enough of them to pay for the start-up.
"""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from checkers.linearizability.checker import CheckResult, check_calls
from checkers.linearizability.counterexample import Counterexample


@dataclass(slots=True)
class FileOptions:
    """How to check each file (the ``fencepost check`` options)."""

    fmt: str = "auto"
    model: str | None = None
    init: Any = None
    timeout: float | None = None
    partition: bool = True
    all_violations: bool = False
    explain: bool = True


@dataclass(slots=True)
class FileReport:
    """The outcome for one file: a verdict with its figures, or an error.

    Attributes:
        path: the file.
        valid: True, False, ``"unknown"``, or None when the file could not be checked.
        summary: the JSON-ready figures (path, valid, model, ops, seconds, invalid_keys...).
        counterexamples: the failing partitions' counterexamples.
        errors: one line per problem when the file could not be checked.
    """

    path: str
    valid: bool | str | None
    summary: dict[str, Any] = field(default_factory=dict)
    counterexamples: list[Counterexample] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def check_file(path: str, opts: FileOptions, *, workers: int | None = None) -> FileReport:
    """Load, check and summarise one history file; problems become ``errors``, never exceptions."""
    from checkers.models import ModelError, choose_model, make_model
    from harness.history.errors import HistoryError
    from harness.history.formats import detect_format, load_history
    from harness.history.pairing import pair_calls

    start = time.monotonic()
    # Millions of small objects and no cycles: the cyclic collector would only rescan them.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        fmt = detect_format(path) if opts.fmt == "auto" else opts.fmt
        calls = pair_calls(load_history(path, fmt))
        name = opts.model or choose_model(fmt, {c.f for c in calls})
        model = make_model(name, opts.init)
        result = check_calls(calls, model, partition=opts.partition, timeout=opts.timeout,
                             all_violations=opts.all_violations, explain=opts.explain, workers=workers)
    except HistoryError as e:
        return FileReport(path, None, {"path": path, "valid": None, "error": str(e.problems[0])},
                          errors=[str(p) for p in e.problems])
    except ModelError as e:
        return FileReport(path, None, {"path": path, "valid": None, "error": f"{path}: {e}"},
                          errors=[f"{path}: {e}"])
    finally:
        if was_enabled:
            gc.enable()
    return FileReport(path, result.valid, summarise(path, fmt, result, time.monotonic() - start),
                      [f.counterexample for f in result.failures if f.counterexample is not None])


def summarise(path: str, fmt: str, result: CheckResult, seconds: float) -> dict[str, Any]:
    """The JSON-ready figures for one checked file."""
    out: dict[str, Any] = {
        "path": path, "valid": result.valid, "model": result.model, "format": fmt, "ops": result.ops,
        "seconds": round(seconds, 4), "check_seconds": round(result.seconds, 4),
        "partitions": result.partitions, "checked": result.checked,
        "invalid_keys": result.invalid_keys, "unknown_keys": result.unknown_keys,
    }
    out["failures"] = [
        {"key": f.label, "method": f.method, "prefix": len(f.counterexample.prefix) if f.counterexample else None,
         "stuck": [f.counterexample.ops[s.op].description for s in f.counterexample.stuck]
         if f.counterexample else []}
        for f in result.failures
    ]
    return out


PARALLEL_MIN_FILES = 8
"""Fewer files than this are checked in this process."""


def check_files(paths: list[str], opts: FileOptions, jobs: int | None = None) -> Iterator[FileReport]:
    """Check each file, yielding reports in the order given.

    Args:
        paths: history files.
        opts: how to check them.
        jobs: processes; None uses every core when there are enough files, and one otherwise.
    """
    if jobs is None:
        jobs = min(os.cpu_count() or 1, len(paths)) if len(paths) >= PARALLEL_MIN_FILES else 1
    if jobs <= 1 or len(paths) <= 1:
        for p in paths:
            yield check_file(p, opts)
        return
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(jobs) as pool:
        # Each worker checks whole files in one process (no nested pools).
        yield from pool.imap(_check_one, [(p, opts) for p in paths], chunksize=max(1, len(paths) // (jobs * 4)))


def _check_one(args: tuple[str, FileOptions]) -> FileReport:
    """Pool entry point: check one file without forking further."""
    return check_file(args[0], args[1], workers=1)
