"""The admin-API checker: the system answers its own faults' admin requests, or refuses them as planned.

The reference system's faults drive it through its admin API (the master's, the operator's), as an admin
would. A planned refusal (``busy``, ``refused``, ``stale_config``, a reconfiguration that failed under a
fault) is an answer. Three replies are not: ``unknown_method`` (the server no longer serves a method it
documents), ``bad_request`` (its handler tripped over a well-formed request) and ``internal`` (a handler
raised). In a test every admin request comes from Fencepost's own faults, so each of those is a bug in
the system or in the fault, and a fault that was refused that way silently did nothing: the run tested
less than its schedule says.

The checker reads the nemesis operations in the history: each completion's error and every string in its
result (a fault records a refusal it plans for under ``refused``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from fencepost import NEMESIS, CheckContext, Op, OpType

UNANSWERED = re.compile(r"\b(unknown_method|bad_request|internal): ")
"""The replies that mean the request was not served: ``code: message``, as the system's RPC errors read."""
EXAMPLES = 10


def strings_in(value: Any) -> Iterator[str]:
    """Every string in ``value``, a string or nested dicts and lists of them (a dict's values, not its keys)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings_in(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from strings_in(v)


def unanswered(history: Sequence[Op]) -> list[dict[str, Any]]:
    """Each nemesis completion whose error or result holds a reply that was no answer."""
    found: list[dict[str, Any]] = []
    for op in history:
        if op.process != NEMESIS or op.type == OpType.INVOKE:
            continue
        for text in [*strings_in(op.error), *strings_in(op.value)]:
            m = UNANSWERED.search(text)
            if m:
                found.append({"index": op.index, "f": op.f, "time": op.time, "reply": text[m.start():][:200],
                              "explanation": f"nemesis {op.f} (op {op.index}) got {text[m.start():][:200]!r}"})
                break
    return found


class AdminApiChecker:
    """Invalid when a fault's admin request was answered as unknown, malformed or failed inside a handler."""

    name = "admin-api"

    def check(self, history: Sequence[Op], ctx: CheckContext) -> dict[str, Any]:
        """Judge the nemesis operations of ``history``."""
        faults = sum(1 for op in history if op.process == NEMESIS and op.type != OpType.INVOKE)
        bad = unanswered(history)
        if not bad:
            return {"valid": True, "faults": faults,
                    "explanation": f"Each of the {faults} fault actions was answered or refused as planned."}
        return {"valid": False, "faults": faults, "violations": bad[:100],
                "explanation": f"{len(bad)} fault action(s) got a reply that serves no request (the system "
                               f"lost a method it documents, or a handler failed):\n"
                               + "\n".join(b["explanation"] for b in bad[:EXAMPLES])}
