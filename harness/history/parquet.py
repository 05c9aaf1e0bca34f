"""Parquet histories through pyarrow, the format Spark reads.

Columns: ``index`` and ``time`` (int64), ``process``, ``type`` and ``f`` (string), and ``key``,
``value``, ``error`` and ``extra`` as JSON text, so any JSON value survives and ``key`` can be used
directly as a partitioning column.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

from harness.history.errors import Problem
from harness.history.op import Op
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


def read_parquet(path: str | Path) -> Iterator[tuple[int, Op | Problem]]:
    """Yield ``(row number from 1, op or problem)`` for each row of a Parquet history."""
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
    row = 0
    for batch in pf.iter_batches(batch_size=100_000):
        cols = batch.to_pydict()
        for i in range(batch.num_rows):
            row += 1
            yield row, _row_to_op(name, row, {c: v[i] for c, v in cols.items()})


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
