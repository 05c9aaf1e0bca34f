"""The exceptions checker: errors that ended fail and info completions, grouped so a reader sees the
distinct failure modes at a glance rather than thousands of lines.

It judges nothing (``valid`` is always True); it explains.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from harness.checker_protocol import CheckContext
from harness.history.op import Op, OpType

_NUMBERS = re.compile(r"\b\d+(\.\d+)?\b|0x[0-9a-fA-F]+")
MAX_GROUPS = 50


def error_class(error: Any) -> str:
    """A short name grouping similar errors: the exception type or first word, numbers masked.

    ``"ConnectionRefusedError: [Errno 111] ..."`` groups as ``ConnectionRefusedError``; ``"timeout after
    502 ms"`` as ``timeout after N ms``; a structured error such as ``["not-leader", 3]`` by its first element.
    """
    if isinstance(error, (list, tuple)) and error:
        return error_class(error[0])
    if isinstance(error, dict):
        for k in ("type", "class", "kind", "error"):
            if k in error:
                return error_class(error[k])
        return "{" + ", ".join(sorted(map(str, error))) + "}"
    text = str(error).strip().splitlines()[0] if str(error).strip() else "(empty)"
    head = text.split(":", 1)[0] if ":" in text[:80] else text
    return _NUMBERS.sub("N", head)[:120]


class ExceptionsChecker:
    """Groups the errors of fail and info completions by class, with counts, functions and an example."""

    name = "exceptions"

    def check(self, history: Sequence[Op], ctx: CheckContext) -> dict[str, Any]:
        """Group errors; always valid."""
        groups: dict[str, dict[str, Any]] = {}
        for op in history:
            if op.type not in (OpType.FAIL, OpType.INFO) or op.error is None:
                continue
            cls = error_class(op.error)
            group = groups.setdefault(cls, {"error": cls, "count": 0, "by_type": {}, "by_f": {}, "example": None})
            group["count"] += 1
            group["by_type"][op.type.value] = group["by_type"].get(op.type.value, 0) + 1
            group["by_f"][op.f] = group["by_f"].get(op.f, 0) + 1
            if group["example"] is None:
                group["example"] = op.to_dict()
        ordered = sorted(groups.values(), key=lambda g: (-g["count"], g["error"]))
        top = ", ".join(f"{g['error']} ({g['count']})" for g in ordered[:3])
        return {
            "valid": True,
            "summary": f"{len(ordered)} kind{'s' if len(ordered) != 1 else ''} of error: {top}" if ordered
            else "no errors",
            "count": sum(g["count"] for g in ordered),
            "groups": ordered[:MAX_GROUPS],
            "groups_omitted": max(0, len(ordered) - MAX_GROUPS),
        }
