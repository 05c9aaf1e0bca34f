"""The key-value state machine applied to each tablet's committed log entries.

An entry's value is an operation: ``{"op": "put", "key", "value"}``, ``{"op": "delete", "key"}``,
``{"op": "cas", "key", "expected", "new"}``, ``{"op": "append", "key", "value"}`` (append to the list
held under ``key``, for the log workload) or ``{"op": "noop"}`` (written by each new leader).
Applying is deterministic, so every replica that applies the same prefix holds the same state.
"""

from __future__ import annotations

from typing import Any

WRITE_OPS = ("put", "delete", "cas", "append")


class KvState:
    """The applied state of one tablet."""

    def __init__(self) -> None:
        self.data: dict[str, Any] = {}
        self.applied = -1

    def apply(self, offset: int, op: dict[str, Any]) -> dict[str, Any]:
        """Apply the entry at ``offset``; return its result ``{"ok": bool, "value": ...}``."""
        assert offset == self.applied + 1, f"apply out of order: {offset} after {self.applied}"
        self.applied = offset
        kind = op.get("op")
        key = str(op.get("key"))
        if kind == "put":
            self.data[key] = op.get("value")
            return {"ok": True, "value": None}
        if kind == "delete":
            existed = key in self.data
            self.data.pop(key, None)
            return {"ok": True, "value": existed}
        if kind == "cas":
            if self.data.get(key) != op.get("expected"):
                return {"ok": False, "value": self.data.get(key), "error": "cas_mismatch"}
            self.data[key] = op.get("new")
            return {"ok": True, "value": None}
        if kind == "append":
            lst = self.data.get(key)
            if not isinstance(lst, list):
                lst = []
            lst = [*lst, op.get("value")]
            self.data[key] = lst
            return {"ok": True, "value": len(lst) - 1}
        return {"ok": True, "value": None}

    def get(self, key: str) -> Any:
        """The value under ``key`` (None if absent)."""
        return self.data.get(key)
