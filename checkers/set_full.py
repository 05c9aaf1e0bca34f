"""Set checker in the style of Jepsen's set-full: which added elements survived the final read.

Every element is added once. After healing, a final read shows the set. Each element is then:

* ``ok``: its add was acknowledged and the final read has it;
* ``lost``: its add was acknowledged, but the final read does not have it (a safety violation);
* ``recovered``: its add's outcome was unknown (info), and the final read has it;
* ``unexpected``: the final read has an element nobody tried to add (a safety violation).

An add that failed (definitely not applied) and yet shows up in the final read is also unexpected.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from harness.checker_protocol import UNKNOWN, CheckContext
from harness.history.op import Op
from harness.history.pairing import pair_calls

EXAMPLES = 20


class SetFullChecker:
    """Judge a set workload by its final read of each set (key)."""

    name = "set"

    def __init__(self, add_f: str = "add", read_f: str = "read") -> None:
        self.add_f = add_f
        self.read_f = read_f

    def check(self, history: Sequence[Op], ctx: CheckContext) -> dict[str, Any]:
        """Classify every element; invalid if any is lost or unexpected, unknown if no final read."""
        adds: dict[Any, dict[Any, str]] = defaultdict(dict)
        add_times: dict[tuple[Any, Any], int] = {}
        finals: dict[Any, set[Any]] = {}
        for call in pair_calls(history):
            if call.f == self.add_f:
                adds[call.key][_h(call.input)] = call.outcome.value
                if call.complete is not None:
                    add_times[(call.key, _h(call.input))] = call.complete.time
            elif call.f == self.read_f and call.outcome.value == "ok":
                finals[call.key] = {_h(x) for x in (call.output or [])}  # the last ok read wins
        counts = {"ok": 0, "lost": 0, "recovered": 0, "unexpected": 0, "never-read": 0}
        examples: dict[str, list[Any]] = defaultdict(list)
        for key in sorted(set(adds) | set(finals), key=repr):
            tried = adds.get(key, {})
            final = finals.get(key)
            if final is None:
                n = sum(1 for outcome in tried.values() if outcome == "ok")
                counts["never-read"] += n
                continue
            for element, outcome in tried.items():
                present = element in final
                status = ("ok" if present else "lost") if outcome == "ok" else (
                    "recovered" if present and outcome == "info" else
                    "unexpected" if present else None)
                if status is None:
                    continue
                counts[status] += 1
                if status in ("lost", "unexpected") and len(examples[status]) < EXAMPLES:
                    examples[status].append({"key": key, "element": element, "acked_at_ns":
                                             add_times.get((key, element))})
            for element in final - set(tried):
                counts["unexpected"] += 1
                if len(examples["unexpected"]) < EXAMPLES:
                    examples["unexpected"].append({"key": key, "element": element, "acked_at_ns": None})
        valid: bool | str = True
        if counts["lost"] or counts["unexpected"]:
            valid = False
        elif counts["never-read"] and not finals:
            valid = UNKNOWN
        explanation = _explain(counts, examples)
        return {"valid": valid, "counts": counts, "examples": dict(examples), "explanation": explanation}


def _h(value: Any) -> Any:
    """A hashable form of an element."""
    return tuple(value) if isinstance(value, list) else value


def _explain(counts: dict[str, int], examples: dict[str, list[Any]]) -> str:
    lines = [f"{counts['ok']} acknowledged adds survived, {counts['recovered']} unknown adds were recovered."]
    if counts["lost"]:
        lines.append(f"{counts['lost']} acknowledged adds are missing from the final read (lost), e.g. "
                     + ", ".join(f"{e['element']!r} in {e['key']!r}" for e in examples["lost"][:5]) + ".")
    if counts["unexpected"]:
        lines.append(f"{counts['unexpected']} elements in the final read were never successfully added, e.g. "
                     + ", ".join(f"{e['element']!r} in {e['key']!r}" for e in examples["unexpected"][:5]) + ".")
    if counts["never-read"]:
        lines.append(f"{counts['never-read']} acknowledged adds belong to sets that no final read observed.")
    return " ".join(lines)
