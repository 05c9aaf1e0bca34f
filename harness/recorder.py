"""Record a test's history as it happens: index, monotonic time, and one flushed line per op."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from harness.history.jsonl import JsonlWriter
from harness.history.op import Op, OpType, Process


class Recorder:
    """Give each op its index and its time (ns since the recorder started) and append it to disk.

    Every op is flushed as it is written, so a harness killed mid-run leaves a readable history.
    The ops are also kept in memory for the checkers.

    Args:
        path: the history.jsonl to append to.
    """

    def __init__(self, path: str | Path) -> None:
        self._writer = JsonlWriter(path)
        self._start = time.monotonic_ns()
        self.ops: list[Op] = []

    def elapsed_ns(self) -> int:
        """Nanoseconds since the recorder started."""
        return time.monotonic_ns() - self._start

    def record(
        self, process: Process, type_: OpType, f: str, key: Any = None, value: Any = None,
        error: Any = None, **extra: Any,
    ) -> Op:
        """Append one op and return it."""
        op = Op(len(self.ops), self.elapsed_ns(), process, type_, f, key, value, error, extra)
        self.ops.append(op)
        self._writer.write(op)
        return op

    def close(self) -> None:
        """Flush and close the history file."""
        self._writer.close()
