"""Parquet histories through pyarrow, the format Spark reads.

Columns: ``index`` and ``time`` (int64), ``process``, ``type`` and ``f`` (string), and ``key``,
``value``, ``error`` and ``extra`` as JSON text, so any JSON value survives and ``key`` can be used
directly as a partitioning column.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from harness.history.errors import Problem
from harness.history.op import NEMESIS, Op, OpType
from harness.history.records import RecordError, op_from_record

COLUMNS = ("index", "time", "process", "type", "f", "key", "value", "error", "extra")


def _schema() -> Any:
    import pyarrow as pa

    s, i = pa.string(), pa.int64()
    return pa.schema([("index", i), ("time", i), ("process", s), ("type", s), ("f", s),
                      ("key", s), ("value", s), ("error", s), ("extra", s)])


def _dumps(value: Any) -> str | None:
    """JSON text for a cell; ints (most keys and values) skip the encoder."""
    if value is None:
        return None
    if type(value) is int:
        return str(value)
    return json.dumps(value, separators=(",", ":"), default=str)


class ParquetWriter:
    """Stream ops into a Parquet file in row groups, never holding the whole history in memory."""

    def __init__(self, path: str | Path, *, batch_rows: int = 200_000) -> None:
        import pyarrow.parquet as pq

        self._schema = _schema()
        self._writer = pq.ParquetWriter(str(path), self._schema, compression="zstd")
        self._batch_rows = batch_rows
        self._rows: dict[str, list[Any]] = {c: [] for c in COLUMNS}

    def write(self, op: Op) -> None:
        """Add one op; a full batch is written out as a row group."""
        rows = self._rows
        rows["index"].append(op.index)
        rows["time"].append(op.time)
        p = op.process
        rows["process"].append(str(p) if type(p) is int else p)
        rows["type"].append(op.type.value)
        rows["f"].append(op.f)
        rows["key"].append(_dumps(op.key))
        rows["value"].append(_dumps(op.value))
        rows["error"].append(_dumps(op.error))
        rows["extra"].append(_dumps(op.extra) if op.extra else None)
        if len(rows["index"]) >= self._batch_rows:
            self._flush()

    def _flush(self) -> None:
        import pyarrow as pa

        if self._rows["index"]:
            self._writer.write_table(pa.Table.from_pydict(self._rows, schema=self._schema))
            self._rows = {c: [] for c in COLUMNS}

    def close(self) -> None:
        """Write the last batch and close the file."""
        self._flush()
        self._writer.close()

    def __enter__(self) -> ParquetWriter:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def write_parquet(ops: Iterable[Op], path: str | Path) -> int:
    """Stream ops to a Parquet file, a row group at a time; return how many were written."""
    n = 0
    with ParquetWriter(path) as writer:
        for op in ops:
            writer.write(op)
            n += 1
    return n


def read_parquet(path: str | Path, rows: Sequence[int] | None = None) -> Iterator[tuple[int, Op | Problem]]:
    """Yield ``(row number from 1, op or problem)`` for each row of a Parquet history.

    Args:
        path: the file.
        rows: only these rows (numbered from 0, ascending), for a reader that takes a share of the
            file; None reads every row.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    name = str(path)
    try:
        pf = pq.ParquetFile(name)
    except Exception as e:  # pyarrow raises ArrowInvalid and friends
        yield 1, Problem(name, 1, f"not a readable Parquet file: {e}")
        return
    missing = [c for c in ("process", "type", "f") if c not in pf.schema_arrow.names]
    if missing:
        yield 1, Problem(name, 1, f"Parquet history lacks column(s) {', '.join(missing)}")
        return
    decode = Decoder()
    start = lo = 0
    for batch in pf.iter_batches(batch_size=100_000):
        end = start + batch.num_rows
        numbers: Sequence[int] = range(start + 1, end + 1)
        if rows is not None:
            hi = bisect.bisect_left(rows, end, lo)
            taken = [r - start for r in rows[lo:hi]]
            numbers = [r + 1 for r in rows[lo:hi]]
            batch = batch.take(pa.array(taken, pa.int64()))
            lo = hi
        start = end
        if batch.num_rows:
            yield from _batch_ops(name, batch.schema.names, batch.to_pydict(), numbers, decode)


class Decoder:
    """JSON text -> value, remembering the results of short texts that are ints, strings, bools or
    null (most keys and values repeat); a text that is not JSON raises :class:`json.JSONDecodeError`."""

    def __init__(self) -> None:
        self.cache: dict[str, Any] = {}

    def __call__(self, text: str | None) -> Any:
        """The value of ``text`` (None for a null cell)."""
        if text is None:
            return None
        got = self.cache.get(text, self)
        if got is not self:
            return got
        value = json.loads(text)
        if len(text) <= 32 and type(value) in _CACHED and len(self.cache) < 100_000:
            self.cache[text] = value
        return value


_CACHED = frozenset({int, str, bool, type(None)})
_TYPES = {t.value: t for t in OpType}
_PROCESS = re.compile(r"-?[0-9]+")


def _batch_ops(name: str, names: list[str], cols: dict[str, list[Any]], numbers: Sequence[int],
               decode: Decoder) -> Iterator[tuple[int, Op | Problem]]:
    """``(row number, op or problem)`` for each row of a batch: the common row on a fast path that
    builds what :func:`_row_to_op` builds, anything else through it."""
    if tuple(names) != COLUMNS:
        for i, row in enumerate(numbers):
            yield row, _row_to_op(name, row, {c: v[i] for c, v in cols.items()})
        return
    index, times, procs, kinds, fs, keys, values, errors, extras = (cols[c] for c in COLUMNS)
    match = _PROCESS.fullmatch
    for i, row in enumerate(numbers):
        ix, t, p, kind, f = index[i], times[i], procs[i], _TYPES.get(kinds[i]), fs[i]
        if (extras[i] is None and kind is not None and type(ix) is int and ix >= 0 and type(t) is int
                and t >= 0 and type(f) is str and f and type(p) is str):
            proc: int | str | None = NEMESIS if p == NEMESIS else int(p) if match(p) else None
            if proc is not None:
                try:
                    yield row, Op(ix, t, proc, kind, f, decode(keys[i]), decode(values[i]), decode(errors[i]), {})
                    continue
                except json.JSONDecodeError:
                    pass
        yield row, _row_to_op(name, row, {c: cols[c][i] for c in COLUMNS})


def _row_to_op(name: str, row: int, raw: dict[str, Any]) -> Op | Problem:
    record: dict[str, Any] = {}
    try:
        for c, v in raw.items():
            if c in ("key", "value", "error", "extra"):
                record[c] = None if v is None else json.loads(v)
            else:
                record[c] = v
        proc = record.get("process")
        if isinstance(proc, str) and proc.lstrip("-").isdigit():
            record["process"] = int(proc)
        extra = record.pop("extra", None) or {}
        if not isinstance(extra, dict):
            return Problem(name, row, "column 'extra' must hold a JSON object")
        record.update({k: v for k, v in extra.items() if k not in record})
        return op_from_record(record, row - 1)
    except (json.JSONDecodeError, RecordError) as e:
        return Problem(name, row, str(e))
