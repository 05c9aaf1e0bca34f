"""A node's event log: one JSON object a line in ``DIR/events.jsonl``, for checkers to read later.

Each line has ``ts`` (wall clock seconds), ``node`` (the node id), ``event`` and event-specific fields,
for example ``{"event": "fenced", "tablet": 0, "epoch": 3, "head": [2, 17]}``. Lines are flushed at
once but not fsynced: the log explains a run, it is not part of the protocol's durable state.
"""

from __future__ import annotations

import json
import time
from typing import Any, TextIO


class EventLog:
    """Appends events to a JSONL file."""

    def __init__(self, path: str, node: str) -> None:
        self.node = node
        self._file: TextIO | None = open(path, "a", encoding="utf-8")  # noqa: SIM115 - long-lived

    def emit(self, event: str, **fields: Any) -> None:
        """Write one event line."""
        if self._file is None:
            return
        rec = {"ts": round(time.time(), 6), "node": self.node, "event": event, **fields}
        self._file.write(json.dumps(rec, separators=(",", ":")) + "\n")
        self._file.flush()

    def close(self) -> None:
        """Close the file; later events are dropped."""
        if self._file is not None:
            self._file.close()
            self._file = None


def read_events(path: str) -> list[dict[str, Any]]:
    """All events in a log file, skipping a torn last line."""
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
    return out
