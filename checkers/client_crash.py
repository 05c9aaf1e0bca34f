"""The client-crash checker: client operations that ended in a programming error.

A client plans for a refused request, a lost connection and a timeout, and each of those ends an
operation as ``fail`` or ``info`` the way Jepsen's clients do. An ``AttributeError``, a ``TypeError`` or a
``KeyError`` is not planned for: the client (the system's client library, or the plugin's adapter over it)
has a bug, and recording the operation as ``info`` alone would hide it, since an unknown outcome is
always allowed. The workers record every exception that ended an operation as its ``crash`` field (type,
where it was raised, and whether it is a programming error: :data:`harness.client_workers.PROGRAMMING_ERRORS`);
this checker makes the run invalid when any is a programming error, and cites the operations, so that
the report shows the first one and where it was raised. The log-pattern checker does the same for the
nodes' own tracebacks.

Histories recorded elsewhere (a Jepsen EDN file, a Porcupine log) carry no ``crash`` field, and are valid
here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness.checker_protocol import CheckContext
from harness.history.op import Op

EXAMPLES = 10


def crash(op: Op) -> dict[str, Any] | None:
    """The op's recorded ``crash``, when it is a programming error."""
    found = op.extra.get("crash")
    return found if isinstance(found, dict) and found.get("programming") else None


class ClientCrashChecker:
    """Invalid when a client operation ended in a programming error; cites each kind's first operation."""

    name = "client-crash"

    def check(self, history: Sequence[Op], ctx: CheckContext) -> dict[str, Any]:
        """Group the crashed operations by type and place; see the module docstring for validity."""
        kinds: dict[tuple[str, str], dict[str, Any]] = {}
        for op in history:
            found = crash(op)
            if found is None:
                continue
            where = (str(found.get("type")), str(found.get("at")))
            kind = kinds.setdefault(where, {"type": where[0], "at": where[1], "count": 0, "index": op.index,
                                            "process": op.process, "f": op.f, "error": op.error})
            kind["count"] += 1
        if not kinds:
            return {"valid": True, "count": 0, "summary": "no client operation ended in a programming error"}
        ordered = sorted(kinds.values(), key=lambda k: k["index"])
        total = sum(k["count"] for k in ordered)
        lines = [f"{k['count']} x {k['type']} at {k['at']}, first in op {k['index']} ({k['f']}): {k['error']}"
                 for k in ordered[:EXAMPLES]]
        return {"valid": False, "count": total, "crashes": ordered[:EXAMPLES],
                "summary": f"{total} client operation{'s' if total != 1 else ''} ended in a programming error",
                "explanation": "The client crashed with a programming error (its operations were recorded as "
                               "info, which hides it):\n" + "\n".join(lines)}
