"""Read and write histories in every supported format, with detection and validation.

Formats: ``jsonl`` (native, read/write), ``edn`` (Jepsen, read/write), ``parquet`` (read/write),
``elle-json`` (elle-cli's JSON array of ops), ``porcupine-etcd`` and ``porcupine-kv`` (read only).

With ``lines=True``, :func:`load_history` and :func:`iter_history` put each op's source line in
``op.extra["line"]`` (the transactional checker names ``file:line`` in its explanations); it is off by
default, so ops read back compare equal to the ops written. For a big history, :func:`load_history`'s
``line_numbers`` keeps the lines apart instead, one int each rather than a dict per op.
"""

from __future__ import annotations

import gc
import importlib
import re
from collections.abc import Callable, Iterable, Iterator, MutableSequence
from pathlib import Path
from typing import Any

from harness.history.errors import HistoryError, Problem
from harness.history.op import Op
from harness.history.semantics import strict_time
from harness.history.validate import Validator

Reader = Callable[[str | Path], Iterator[tuple[int, Op | Problem]]]


def _lazy(target: str) -> Any:
    """``module:function``, imported on the first call (a check of etcd logs never loads Parquet)."""
    module, attr = target.split(":")

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(module), attr)(*args, **kwargs)

    call.__name__ = attr
    return call


READERS: dict[str, Reader] = {
    "jsonl": _lazy("harness.history.jsonl:read_jsonl"),
    "edn": _lazy("harness.history.edn:read_edn"),
    "parquet": _lazy("harness.history.parquet:read_parquet"),
    "elle-json": _lazy("harness.history.elle_json:read_elle_json"),
    "porcupine-etcd": _lazy("harness.history.porcupine:read_porcupine_etcd"),
    "porcupine-kv": _lazy("harness.history.porcupine:read_porcupine_kv"),
}
WRITERS: dict[str, Callable[[Iterable[Op], str | Path], None]] = {
    "jsonl": _lazy("harness.history.jsonl:write_jsonl"),
    "edn": _lazy("harness.history.edn:write_edn"),
    "parquet": _lazy("harness.history.parquet:write_parquet"),
}
FORMATS = ("auto", *READERS)
MAX_PROBLEMS = 50
LINE = "line"
"""The ``extra`` field that holds an op's source line when a history is read with ``lines=True``."""
_JSON_ARRAY_OF_OBJECTS = re.compile(r'\[\s*\{\s*"[^"\n]*"\s*:')
"""The start of elle-cli's JSON history: an array whose first element is a JSON object (EDN maps have keyword keys)."""


def detect_format(path: str | Path) -> str:
    """Guess a history's format from its first bytes, then its extension.

    Raises:
        HistoryError: the file cannot be opened or its format is not recognised.
    """
    name = str(path)
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except FileNotFoundError:
        raise HistoryError([Problem(name, 0, "no such file")]) from None
    except IsADirectoryError:
        raise HistoryError([Problem(name, 0, "is a directory with no history.edn or history.jsonl in it, "
                                             "not a history file or a run folder")]) from None
    except OSError as e:
        raise HistoryError([Problem(name, 0, f"cannot read: {e.strerror}")]) from None
    if head.startswith(b"PAR1"):
        return "parquet"
    text = head.decode("utf-8", errors="replace").lstrip()
    if b"jepsen.util" in head:
        return "porcupine-etcd"
    if text.startswith("{\""):
        return "jsonl"
    if _JSON_ARRAY_OF_OBJECTS.match(text):
        return "elle-json"
    first_line = text.split("\n", 1)[0]
    from harness.history.porcupine import _KV_LINE

    if _KV_LINE.match(first_line.rstrip("\r") + "\n") or _KV_LINE.match(first_line):
        return "porcupine-kv"
    if text[:1] in ("[", "(", "{", ";"):
        return "edn"
    by_suffix = {".jsonl": "jsonl", ".json": "jsonl", ".edn": "edn", ".parquet": "parquet"}
    suffix = Path(name).suffix.lower()
    if suffix in by_suffix:
        return by_suffix[suffix]
    if not text:
        return "jsonl"
    raise HistoryError([Problem(name, 1, "unrecognised history format: pass --format")])


def iter_history(path: str | Path, fmt: str = "auto", *, allow_torn_tail: bool = False,
                 warnings: list[Problem] | None = None, lines: bool = False) -> Iterator[tuple[int, Op]]:
    """Yield ``(line, op)`` for each op, validating as it goes.

    ``allow_torn_tail`` (JSONL only) drops a torn last line, as a killed writer leaves. ``warnings``, when
    given, receives what did not make the history malformed (EDN's time going backwards), at the end.
    ``lines`` also puts each op's line in ``op.extra["line"]``.

    Raises:
        HistoryError: with every problem found (up to a cap), once the file has been read.
    """
    name = str(path)
    if fmt == "auto":
        fmt = detect_format(path)
    items = _items(path, fmt, allow_torn_tail)
    validator = Validator(name, strict_time=strict_time(fmt))
    feed = validator.feed
    problems: list[Problem] = []
    extra = [0]
    try:
        for line, item in items:
            found = [item] if isinstance(item, Problem) else feed(line, item)
            if found:
                _note(problems, extra, found)
                continue
            if not problems:
                assert isinstance(item, Op)
                if lines:
                    item.extra[LINE] = line
                yield line, item
    except FileNotFoundError:
        raise HistoryError([Problem(name, 0, "no such file")]) from None
    except IsADirectoryError:
        raise HistoryError([Problem(name, 0, "is a directory, not a history file")]) from None
    _raise_problems(name, problems, extra[0])
    if warnings is not None:
        warnings.extend(validator.warnings())


def _items(path: str | Path, fmt: str, allow_torn_tail: bool) -> Iterator[tuple[int, Op | Problem]]:
    """The format's reader over ``path`` (``auto`` detects the format)."""
    name = str(path)
    if fmt == "auto":
        fmt = detect_format(path)
    reader = READERS.get(fmt)
    if reader is None:
        raise HistoryError([Problem(name, 0, f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")])
    try:
        if allow_torn_tail and fmt == "jsonl":
            from harness.history.jsonl import read_jsonl

            return read_jsonl(path, allow_torn_tail=True)
        return reader(path)
    except FileNotFoundError:
        raise HistoryError([Problem(name, 0, "no such file")]) from None
    except IsADirectoryError:
        raise HistoryError([Problem(name, 0, "is a directory, not a history file")]) from None


def _note(problems: list[Problem], extra: list[int], found: list[Problem]) -> None:
    """Keep up to :data:`MAX_PROBLEMS` problems, counting the rest in ``extra[0]``."""
    if len(problems) < MAX_PROBLEMS:
        problems.extend(found[: MAX_PROBLEMS - len(problems)])
    extra[0] += max(0, len(found) - (MAX_PROBLEMS - len(problems)))


def _raise_problems(name: str, problems: list[Problem], extra: int) -> None:
    if problems:
        if extra:
            problems.append(Problem(name, 0, f"... and {extra} more problem(s)"))
        raise HistoryError(problems)


def load_history(path: str | Path, fmt: str = "auto", *, allow_torn_tail: bool = False,
                 warnings: list[Problem] | None = None, lines: bool = False,
                 line_numbers: MutableSequence[int] | None = None) -> list[Op]:
    """Read and validate a whole history.

    Args:
        path: the history file.
        fmt: one of :data:`FORMATS`; ``auto`` detects it.
        allow_torn_tail: drop a torn last JSONL line, as a killed writer leaves.
        warnings: receives what did not make the history malformed: in EDN, where time is advisory
            (:mod:`harness.history.semantics`), one warning when time goes backwards.
        lines: put each op's source line in ``op.extra["line"]`` (JSONL: the line; EDN and elle-json:
            the line where the op's map starts; Parquet: the row, from 1).
        line_numbers: receives the same line for each op, in order (a list, or an ``array("q")`` for a big
            history): what :func:`checkers.txn.check_txn` takes as ``lines``, at a fraction of the memory.

    Raises:
        HistoryError: every problem found, each naming ``file:line``.
    """
    # The loop of iter_history without a generator in between (this is the hot path for big files). The
    # cyclic garbage collector is off meanwhile: reading builds millions of objects and no cycles, and its
    # passes over them would take several times as long as the reading itself.
    if gc.isenabled():
        gc.disable()
        try:
            return load_history(path, fmt, allow_torn_tail=allow_torn_tail, warnings=warnings, lines=lines,
                                line_numbers=line_numbers)
        finally:
            gc.enable()
    name = str(path)
    if fmt == "auto":
        fmt = detect_format(path)
    items = _items(path, fmt, allow_torn_tail)
    validator = Validator(name, strict_time=strict_time(fmt))
    feed = validator.feed
    problems: list[Problem] = []
    extra = [0]
    ops: list[Op] = []
    append = ops.append
    note_line = None if line_numbers is None else line_numbers.append
    try:
        for line, item in items:
            if type(item) is Op:
                found = feed(line, item)
                if not found:
                    if not problems:
                        if lines:
                            item.extra[LINE] = line
                        if note_line is not None:
                            note_line(line)
                        append(item)
                    continue
            else:
                found = [item]  # type: ignore[list-item]
            _note(problems, extra, found)
    except FileNotFoundError:
        raise HistoryError([Problem(name, 0, "no such file")]) from None
    except IsADirectoryError:
        raise HistoryError([Problem(name, 0, "is a directory, not a history file")]) from None
    _raise_problems(name, problems, extra[0])
    if warnings is not None:
        warnings.extend(validator.warnings())
    return ops


def write_history(ops: Iterable[Op], path: str | Path, fmt: str | None = None) -> None:
    """Write ops in ``fmt`` (by default chosen from the extension: .edn, .parquet, else JSONL)."""
    if fmt is None:
        suffix = Path(path).suffix.lower()
        fmt = {".edn": "edn", ".parquet": "parquet"}.get(suffix, "jsonl")
    writer = WRITERS.get(fmt)
    if writer is None:
        raise ValueError(f"cannot write format {fmt!r}; writable: {', '.join(WRITERS)}")
    writer(ops, path)
