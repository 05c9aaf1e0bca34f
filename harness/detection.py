"""When a run's anomaly first showed: the earliest evidence any failing checker cites, in test seconds.

The detection matrix reports each bug's time to detection. A checker may say it directly with
``first_anomaly_s`` in its result (the amnesia checker does, from its violations' ``at_ns``). For the
others the evidence is read from their usual result fields:

* ``linearizable``: the history positions of each counterexample's stuck operations (``call_line``);
* any result: ints under ``op`` or ``index`` (history indices) and ints under keys ending in ``_at_ns``.

The time is when the first cited operation or event happened, not when the checker ran (checkers run
after the test). ``None`` when no failing checker cites anything with a time.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from harness.history.op import Op

INDEX_KEYS = ("op", "index")


def _cited(value: Any, depth: int = 0) -> Iterator[tuple[str, int]]:
    """``("index", i)`` and ``("ns", t)`` for every citation found in a result, a few levels deep."""
    if depth > 6:
        return
    if isinstance(value, Mapping):
        for k, v in value.items():
            if isinstance(v, int) and not isinstance(v, bool):
                if k in INDEX_KEYS:
                    yield "index", v
                elif str(k).endswith("_at_ns"):
                    yield "ns", v
            elif isinstance(v, (Mapping, list)):
                yield from _cited(v, depth + 1)
    elif isinstance(value, list):
        for v in value[:200]:
            yield from _cited(v, depth + 1)


def _linearizable_lines(result: Mapping[str, Any]) -> Iterator[int]:
    for ce in result.get("counterexamples") or []:
        ops = ce.get("ops") or []
        for stuck in ce.get("stuck") or []:
            pos = stuck.get("op")
            if isinstance(pos, int) and 0 <= pos < len(ops):
                yield int(ops[pos]["call_line"])


def first_anomaly_s(name: str, result: Mapping[str, Any], times_ns: Mapping[int, int]) -> float | None:
    """The earliest evidence ``result`` (of checker ``name``) cites, in seconds since the test started."""
    if isinstance(result.get("first_anomaly_s"), (int, float)):
        return float(result["first_anomaly_s"])
    found: list[int] = []
    if name == "linearizable":
        found += [times_ns[i] for i in _linearizable_lines(result) if i in times_ns]
    if not found:
        for kind, v in _cited(result):
            if kind == "ns":
                found.append(v)
            elif v in times_ns:
                found.append(times_ns[v])
    return round(max(0, min(found)) / 1e9, 3) if found else None


def detection(checker_results: Mapping[str, Mapping[str, Any]], history: Sequence[Op]) -> dict[str, Any]:
    """``{"checkers": [names of failing checkers], "first_anomaly_s": float | None, "by_checker": {...}}``."""
    failing = {n: r for n, r in checker_results.items() if r.get("valid") is False}
    if not failing:
        return {"checkers": [], "first_anomaly_s": None, "by_checker": {}}
    times_ns = {op.index: op.time for op in history}
    by_checker = {n: first_anomaly_s(n, r, times_ns) for n, r in sorted(failing.items())}
    known = [t for t in by_checker.values() if t is not None]
    return {"checkers": sorted(failing), "first_anomaly_s": min(known) if known else None, "by_checker": by_checker}
