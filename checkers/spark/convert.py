"""Histories in any format -> Parquet, streaming, so Spark can read them (step 1 of the Spark engine)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from harness.history.parquet import ParquetWriter

if TYPE_CHECKING:
    from harness.history.errors import Problem


def to_parquet(path: str | Path, out: str | Path, fmt: str = "auto", warnings: list[Problem] | None = None) -> str:
    """Convert the history at ``path`` (JSONL, EDN, Porcupine...) to a Parquet file at ``out``.

    The ops are validated as the local engine validates them and written in row groups, never held
    in memory all at once. ``warnings``, when given, receives what the validation found that does not
    make the history malformed (in EDN, time stepping back), as the local engine's loading does.

    Returns:
        ``out``, as a string.

    Raises:
        HistoryError: the history has problems (the partial file is removed).
    """
    from harness.history.errors import HistoryError
    from harness.history.formats import iter_history

    try:
        with ParquetWriter(out) as writer:
            for _, op in iter_history(path, fmt, warnings=warnings):
                writer.write(op)
    except HistoryError:
        Path(out).unlink(missing_ok=True)
        raise
    return str(out)
