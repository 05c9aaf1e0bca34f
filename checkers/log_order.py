"""Log checker: every acknowledged append appears exactly once, in order, with no gaps.

For each log (key), the last ok read after healing is the final log. The checker reports:

* ``lost``: an acknowledged append missing from the final log;
* ``duplicated``: an element appearing more than once;
* ``misplaced``: an acknowledged append whose position (returned by the append) differs from where
  the final log holds it;
* ``unexpected``: an element nobody appended (or whose append definitely failed);
* ``divergent reads``: an ok read that is not a prefix of the final log (history rewritten).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

from harness.checker_protocol import UNKNOWN, CheckContext
from harness.history.op import Op
from harness.history.pairing import pair_calls

EXAMPLES = 20


class LogOrderChecker:
    """Judge an append-only log workload by its reads."""

    name = "log"

    def __init__(self, append_f: str = "append", read_f: str = "read-log") -> None:
        self.append_f = append_f
        self.read_f = read_f

    def check(self, history: Sequence[Op], ctx: CheckContext) -> dict[str, Any]:
        """Check each log's final read against its appends and earlier reads."""
        appends: dict[Any, dict[Any, tuple[str, Any]]] = defaultdict(dict)
        reads: dict[Any, list[list[Any]]] = defaultdict(list)
        for call in pair_calls(history):
            if call.f == self.append_f:
                pos = call.output.get("position") if isinstance(call.output, dict) else None
                appends[call.key][call.input] = (call.outcome.value, pos)
            elif call.f == self.read_f and call.outcome.value == "ok":
                reads[call.key].append(list(call.output or []))
        problems: dict[str, list[Any]] = defaultdict(list)
        counts: Counter[str] = Counter()
        unread = 0
        for key in sorted(set(appends) | set(reads), key=repr):
            tried = appends.get(key, {})
            if not reads.get(key):
                unread += sum(1 for outcome, _ in tried.values() if outcome == "ok")
                continue
            final = reads[key][-1]
            where: dict[Any, int] = {}
            for i, element in enumerate(final):
                if element in where:
                    counts["duplicated"] += 1
                    _note(problems, "duplicated", {"key": key, "element": element, "positions": [where[element], i]})
                else:
                    where[element] = i
                outcome = tried.get(element, ("never", None))[0]
                if outcome not in ("ok", "info"):
                    counts["unexpected"] += 1
                    _note(problems, "unexpected", {"key": key, "element": element, "append": outcome})
            for element, (outcome, pos) in tried.items():
                if outcome != "ok":
                    continue
                if element not in where:
                    counts["lost"] += 1
                    _note(problems, "lost", {"key": key, "element": element, "acked_position": pos})
                elif pos is not None and where[element] != pos:
                    counts["misplaced"] += 1
                    _note(problems, "misplaced", {"key": key, "element": element, "acked_position": pos,
                                                  "final_position": where[element]})
            for earlier in reads[key][:-1]:
                if earlier != final[: len(earlier)]:
                    counts["divergent-reads"] += 1
                    _note(problems, "divergent-reads", {"key": key, "read_length": len(earlier)})
        valid: bool | str = False if counts else (UNKNOWN if unread and not reads else True)
        explanation = "; ".join(f"{n} {kind}" for kind, n in sorted(counts.items())) or "every acknowledged append is"\
            " present exactly once, at its acknowledged position, and every read is a prefix of the final log"
        return {"valid": valid, "counts": dict(counts), "unread_acked": unread, "examples": dict(problems),
                "explanation": explanation}


def _note(problems: dict[str, list[Any]], kind: str, example: dict[str, Any]) -> None:
    if len(problems[kind]) < EXAMPLES:
        problems[kind].append(example)
