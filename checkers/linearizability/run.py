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
from typing import TYPE_CHECKING, Any

from checkers.linearizability.checker import CheckResult, PartitionVerdict, check_calls

if TYPE_CHECKING:
    from checkers.linearizability.counterexample import Counterexample
    from checkers.linearizability.progress import CheckEvents
    from checkers.linearizability.witness import Witness


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
    nil_read: str | None = None
    """``any`` or ``absent`` for every file; None: by format (:mod:`harness.history.semantics`)."""
    split: bool = True
    """Search a partition's independent components (keys) apart (:mod:`checkers.linearizability.components`)."""
    max_memory: int | None = None
    """Bytes the checking processes may hold in all; None: a share of the machine's memory."""
    witness: bool = False
    """Find a minimal failing sub-history for every invalid partition (needs ``explain``)."""


@dataclass(slots=True)
class FileReport:
    """The outcome for one file: a verdict with its figures, or an error.

    Attributes:
        path: the file.
        valid: True, False, ``"unknown"``, or None when the file could not be checked.
        summary: the JSON-ready figures (path, valid, model, ops, seconds, invalid_keys...).
        counterexamples: the failing partitions' counterexamples.
        errors: one line per problem when the file could not be checked.
        witnesses: the failing partitions' minimal witnesses, when asked for.
    """

    path: str
    valid: bool | str | None
    summary: dict[str, Any] = field(default_factory=dict)
    counterexamples: list[Counterexample] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    witnesses: list[Witness] = field(default_factory=list)


def check_file(path: str, opts: FileOptions, *, workers: int | None = None,
               events: CheckEvents | None = None) -> FileReport:
    """Load, check and summarise one history file; problems become ``errors``, never exceptions.

    ``events`` hears the file's plan before the check and each partition's verdict as it comes.
    """
    from checkers.models import ModelError, choose_model, make_model
    from harness.history.errors import HistoryError, Problem
    from harness.history.formats import detect_format, load_history
    from harness.history.pairing import pair_calls
    from harness.history.semantics import semantics_for

    start = time.monotonic()
    # Millions of small objects and no cycles: the cyclic collector would only rescan them.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        fmt = detect_format(path) if opts.fmt == "auto" else opts.fmt
        semantics = semantics_for(fmt, opts.nil_read)
        warnings: list[Problem] = []
        result = _check_sharded(path, fmt, opts, workers, start, events)
        if result is None:
            calls = pair_calls(load_history(path, fmt, warnings=warnings))
            name = opts.model or choose_model(fmt, {c.f for c in calls})
            model = make_model(name, opts.init, nil_read=semantics.nil_read)
            result = check_calls(calls, model, partition=opts.partition, timeout=opts.timeout,
                                 all_violations=opts.all_violations, explain=opts.explain, workers=workers,
                                 **_search_options(path, opts, events))
    except HistoryError as e:
        return FileReport(path, None, {"path": path, "valid": None, "error": str(e.problems[0])},
                          errors=[str(p) for p in e.problems])
    except ModelError as e:
        return FileReport(path, None, {"path": path, "valid": None, "error": f"{path}: {e}"},
                          errors=[f"{path}: {e}"])
    finally:
        if was_enabled:
            gc.enable()
    witnesses = [f.witness for f in result.failures if f.witness is not None]
    if witnesses:
        from checkers.linearizability.witness_io import attach_sources

        attach_sources(path, fmt, witnesses)
    summary = summarise(path, fmt, result, time.monotonic() - start)
    summary["semantics"] = semantics.to_dict()
    summary["warnings"] = [str(w) for w in warnings]
    return FileReport(path, result.valid, summary,
                      [f.counterexample for f in result.failures if f.counterexample is not None],
                      witnesses=witnesses)


def _search_options(path: str, opts: FileOptions, events: CheckEvents | None) -> dict[str, Any]:
    """check_calls's search options and event hooks for one file."""
    from checkers.linearizability.memory import default_max_memory

    out: dict[str, Any] = {"split": opts.split, "witness": opts.witness and opts.explain,
                           "max_memory": opts.max_memory or default_max_memory()}
    if events is not None:
        from checkers.linearizability.estimate import plan
        from checkers.linearizability.progress import partition_record

        wants_plan = getattr(events, "wants_plan", lambda p: True)

        def planned(parts: list[Any]) -> None:
            p = plan(parts, split=opts.split)
            if wants_plan(p):
                events.planned(path, p)

        out["on_parts"] = planned
        if getattr(events, "wants_partitions", True):
            out["on_verdict"] = lambda v: events.decided(path, partition_record(v))
    return out


def _check_sharded(path: str, fmt: str, opts: FileOptions, workers: int | None, start: float,
                   events: CheckEvents | None = None) -> CheckResult | None:
    """A big Parquet or JSONL file checked end to end in several processes
    (:mod:`checkers.linearizability.sharded`), or None for the one-process path."""
    import multiprocessing

    from checkers.linearizability import sharded
    from checkers.models import choose_model, make_model

    shares = (os.cpu_count() or 1) if workers is None else workers
    if (shares < 2 or not opts.partition or fmt not in ("parquet", "jsonl") or multiprocessing.current_process().daemon
            or not sharded.big_enough(path, fmt)):
        return None
    plan = sharded.plan_shards(path, fmt, shares)
    if plan is None:
        return None
    from harness.history.semantics import semantics_for

    model = make_model(opts.model or choose_model(fmt, plan.fs), opts.init,
                       nil_read=semantics_for(fmt, opts.nil_read).nil_read)
    search = _search_options(path, opts, events)
    search.pop("on_parts", None)
    if events is not None:
        from checkers.linearizability.estimate import FilePlan

        coarse = FilePlan(plan.partitions, 0, 0, 0, 0.0, exact=False)
        if getattr(events, "wants_plan", lambda p: True)(coarse):
            events.planned(path, coarse)
    return sharded.check_sharded(path, fmt, model, plan, shares=shares, start=start, timeout=opts.timeout,
                                 all_violations=opts.all_violations, explain=opts.explain, **search)


def summarise(path: str, fmt: str, result: CheckResult, seconds: float) -> dict[str, Any]:
    """The JSON-ready figures for one checked file."""
    out: dict[str, Any] = {
        "path": path, "valid": result.valid, "model": result.model, "format": fmt, "ops": result.ops,
        "seconds": round(seconds, 4), "check_seconds": round(result.seconds, 4),
        "partitions": result.partitions, "checked": result.checked,
        "invalid_keys": result.invalid_keys, "unknown_keys": result.unknown_keys,
    }
    if result.unknown_keys:
        out["unknown_reasons"] = result.unknown_reasons
    out["failures"] = [
        {"key": f.label, "method": f.method, "prefix": len(f.counterexample.prefix) if f.counterexample else None,
         "stuck": [f.counterexample.ops[s.op].description for s in f.counterexample.stuck]
         if f.counterexample else [], **_witness_summary(f)}
        for f in result.failures
    ]
    return out


def _witness_summary(f: PartitionVerdict) -> dict[str, Any]:
    w = f.witness
    if w is None:
        return {}
    return {"witness": [{"op": text, "source": w.source(c)} for c, text in zip(w.calls, w.descriptions, strict=True)],
            "witness_minimal": w.minimal, "witness_seconds": round(w.seconds, 4)}


PARALLEL_MIN_FILES = 2
"""Fewer files than this are checked in this process."""
PARALLEL_MIN_BYTES = 64 * 1024
"""Files smaller than this in all are checked in this process: forking would cost more."""


def check_files(paths: list[str], opts: FileOptions, jobs: int | None = None,
                events: CheckEvents | None = None) -> Iterator[FileReport]:
    """Check each file, yielding reports in the order given.

    Args:
        paths: history files.
        opts: how to check them.
        jobs: processes; None uses every core when there is enough work, and one otherwise.
        events: hears each file's plan and each partition's verdict as they come, from every process.
    """
    sizes = [_size(p) for p in paths]
    if jobs is None:
        enough = len(paths) >= PARALLEL_MIN_FILES and sum(sizes) >= PARALLEL_MIN_BYTES
        jobs = min(os.cpu_count() or 1, len(paths)) if enough else 1
    if jobs <= 1 or len(paths) <= 1:
        for p in paths:
            yield check_file(p, opts, events=events)
        return
    import dataclasses

    from checkers.linearizability.memory import default_max_memory, share

    # The memory bound is for all the processes checking at once: each worker gets its share.
    each = dataclasses.replace(opts, max_memory=share(opts.max_memory or default_max_memory(), jobs))
    yield from _forked(paths, sizes, each, jobs, events)


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _forked(paths: list[str], sizes: list[int], opts: FileOptions, jobs: int,
            events: CheckEvents | None = None) -> Iterator[FileReport]:
    """Check files in ``jobs`` forked workers that take the biggest file left whenever they are free.

    The work queue is a file of 4-byte indices, biggest file first, whose offset the workers share
    (each read takes the next index atomically), so the longest file starts at once and the others
    fill in around it. Each worker sends back pickled reports on its own pipe; they are yielded in
    the order given as soon as every earlier one is in. Events (index -1) are passed on at once.
    """
    import contextlib
    import pickle
    import selectors
    import signal
    import tempfile

    _preload()
    order = sorted(range(len(paths)), key=lambda i: -sizes[i])
    queue = tempfile.TemporaryFile()  # noqa: SIM115 - closed in the finally below
    queue.write(b"".join(i.to_bytes(4, "little") for i in order))
    queue.flush()
    os.lseek(queue.fileno(), 0, os.SEEK_SET)
    pids: list[int] = []
    sel = selectors.DefaultSelector()
    try:
        for _ in range(jobs):
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:  # pragma: no cover - runs in the child
                os.close(r)
                _worker(queue.fileno(), w, paths, opts, events)
            os.close(w)
            pids.append(pid)
            sel.register(r, selectors.EVENT_READ, bytearray())
        done: dict[int, Any] = {}
        nxt = 0
        while nxt < len(paths):
            if nxt in done:
                got = done.pop(nxt)
                if isinstance(got, BaseException):
                    raise got
                yield got
                nxt += 1
                continue
            if not sel.get_map():
                raise RuntimeError(f"a checker worker died before reporting on {paths[nxt]}")
            for key, _ in sel.select():
                buf: bytearray = key.data
                chunk = os.read(key.fd, 1 << 20)
                if not chunk:
                    sel.unregister(key.fd)
                    os.close(key.fd)
                    continue
                buf += chunk
                while len(buf) >= 8 and len(buf) >= 8 + int.from_bytes(buf[:8], "little"):
                    n = int.from_bytes(buf[:8], "little")
                    i, got = pickle.loads(buf[8:8 + n])
                    del buf[:8 + n]
                    if i < 0:
                        if events is not None:
                            kind, path, payload = got
                            getattr(events, kind)(path, payload)
                        continue
                    done[i] = got
    finally:
        for key in list(sel.get_map().values()):
            sel.unregister(key.fd)
            os.close(key.fd)
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
            os.waitpid(pid, 0)
        queue.close()


def _send(out: int, message: Any) -> None:  # pragma: no cover - runs in the child
    """Write one length-prefixed pickled message on the pipe ``out``."""
    import pickle

    data = pickle.dumps(message)
    data = len(data).to_bytes(8, "little") + data
    view = memoryview(data)
    while view:
        view = view[os.write(out, view):]


class _PipeEvents:  # pragma: no cover - runs in the child
    """Events of a forked worker, sent to the parent as ``(-1, (kind, path, payload))``; only those the
    parent's events object wants."""

    def __init__(self, out: int, wanted: Any) -> None:
        self.out = out
        self.wants_partitions = getattr(wanted, "wants_partitions", True)
        self.wants_plan = getattr(wanted, "wants_plan", lambda p: True)

    def planned(self, path: str, plan: Any) -> None:
        _send(self.out, (-1, ("planned", path, plan)))

    def decided(self, path: str, partition: dict[str, Any]) -> None:
        _send(self.out, (-1, ("decided", path, partition)))


def _worker(queue: int, out: int, paths: list[str], opts: FileOptions,
            wanted: CheckEvents | None) -> None:  # pragma: no cover
    """A forked worker: check the files whose indices it takes from ``queue``, report on ``out``, exit."""
    import pickle

    code = 0
    events = _PipeEvents(out, wanted) if wanted is not None else None
    try:
        while True:
            raw = os.read(queue, 4)
            if len(raw) < 4:
                break
            i = int.from_bytes(raw, "little")
            got: Any
            try:
                got = check_file(paths[i], opts, workers=1, events=events)
            except BaseException as e:  # re-raised by the parent
                got = e
            try:
                data = pickle.dumps((i, got))
            except Exception as e:
                data = pickle.dumps((i, RuntimeError(f"checking {paths[i]}: {e!r}")))
            data = len(data).to_bytes(8, "little") + data
            view = memoryview(data)
            while view:
                view = view[os.write(out, view):]
    except BaseException:
        code = 1
    finally:
        os._exit(code)


def _preload() -> None:
    """Import what :func:`check_file` needs, once, before forking."""
    import checkers.linearizability.counterexample
    import checkers.models
    import harness.history.formats
    import harness.history.pairing
    import harness.history.porcupine

    del checkers, harness
