"""Native JSON Lines histories: one op per line, flushed per op so a crash loses at most one op.

Reading decodes each line straight into its fields with ``msgspec`` (no dict in between), the fast path
for the lines Fencepost writes: exactly the core fields, well typed. Any other line (extra fields, a
missing index, a wrong type, bad JSON, a blank line) goes through ``orjson`` and
:func:`~harness.history.records.op_from_record`, which keep what the fast path cannot and name the
problem; both give the same op for a line both accept.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Annotated, Any

import msgspec
import orjson

from harness.history.errors import Problem
from harness.history.op import NEMESIS, Op, OpType
from harness.history.records import RecordError, op_from_record

_Natural = Annotated[int, msgspec.Meta(ge=0)]


class _Line(msgspec.Struct, forbid_unknown_fields=True):
    """A line with exactly the core fields, each of its type (anything else takes the general path)."""

    index: _Natural
    time: _Natural
    process: int | str
    type: OpType
    f: Annotated[str, msgspec.Meta(min_length=1)]
    key: Any = None
    value: Any = None
    error: Any = None


_decode_line = msgspec.json.Decoder(_Line).decode


def read_jsonl(path: str | Path, *, allow_torn_tail: bool = False,
               rows: Sequence[int] | None = None) -> Iterator[tuple[int, Op | Problem]]:
    """Yield ``(line number, op or problem)`` for each non-blank line of a JSONL file.

    ``rows`` (numbers from 0 among the non-blank lines, ascending) reads only those lines, for a
    reader that takes a share of the file.

    A line that is not a JSON object of op fields yields a :class:`Problem` naming ``path:line``;
    reading goes on, so every bad line is reported. A truncated last line (a writer killed mid-op)
    is one such problem, unless ``allow_torn_tail`` is set: then an unparseable last line with no
    newline is dropped, as a crash can only have torn the op being written.
    """
    name = str(path)
    if rows is not None:
        yield from _read_rows(name, rows)
        return
    position = 0
    decode, not_fast = _decode_line, msgspec.DecodeError  # a ValidationError is a DecodeError
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            try:
                line = decode(raw)
            except not_fast:
                pass
            else:
                process = line.process
                if type(process) is int or process == NEMESIS:
                    position += 1
                    yield lineno, Op(line.index, line.time, process, line.type, line.f, line.key, line.value,
                                     line.error, {})
                    continue
            if not raw.strip():  # a blank line
                continue
            try:
                record = orjson.loads(raw)
            except orjson.JSONDecodeError:
                if allow_torn_tail and not raw.endswith(b"\n"):  # only the last line can lack one
                    return
                yield lineno, Problem(name, lineno, _json_problem(raw))
                continue
            try:
                op = op_from_record(record, position)
            except RecordError as e:
                yield lineno, Problem(name, lineno, str(e))
                continue
            position += 1
            yield lineno, op


def _read_rows(name: str, rows: Sequence[int]) -> Iterator[tuple[int, Op | Problem]]:
    """:func:`read_jsonl` over the chosen non-blank lines only (index and time must be present)."""
    wanted = iter(rows)
    nxt = next(wanted, -1)
    row = -1
    with open(name, "rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            if nxt < 0:
                return
            if not raw.strip():
                continue
            row += 1
            if row != nxt:
                continue
            nxt = next(wanted, -1)
            try:
                yield lineno, op_from_record(orjson.loads(raw), row)
            except orjson.JSONDecodeError:
                yield lineno, Problem(name, lineno, _json_problem(raw))
            except RecordError as e:
                yield lineno, Problem(name, lineno, str(e))


def _json_problem(raw: bytes) -> str:
    """Why a line is not JSON, in the standard library's words (it names the column)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        return f"not UTF-8 text: {e.reason}"
    try:
        json.loads(text)
    except json.JSONDecodeError as e:
        return f"unparseable JSON: {e.msg} at column {e.colno}"
    return "unparseable JSON"


def op_to_json(op: Op) -> str:
    """One op as a compact JSON line, without the newline."""
    return json.dumps(op.to_dict(), separators=(",", ":"), default=str)


class JsonlWriter:
    """Append ops to a JSONL file, flushing each line so a killed writer leaves a readable history.

    Args:
        path: the file to write.
        fsync: also fsync after every op (slower; survives a machine crash, not only a process crash).
    """

    def __init__(self, path: str | Path, *, fsync: bool = False) -> None:
        self.path = Path(path)
        self._fsync = fsync
        self._fh: IO[str] = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()

    def write(self, op: Op) -> None:
        """Append one op and flush it."""
        self._fh.write(op_to_json(op) + "\n")
        self._fh.flush()
        if self._fsync:
            os.fsync(self._fh.fileno())

    def close(self) -> None:
        """Flush and close the file."""
        if not self._fh.closed:
            self._fh.flush()
            self._fh.close()

    def __enter__(self) -> JsonlWriter:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def write_jsonl(ops: Iterable[Op], path: str | Path) -> None:
    """Write ops to a new JSONL file (replacing any file there)."""
    with open(path, "w", encoding="utf-8") as fh:
        for op in ops:
            fh.write(op_to_json(op) + "\n")
