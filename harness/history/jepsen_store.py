"""A Jepsen run folder as input: its ``history.edn``, and the verdict Jepsen wrote in ``results.edn``.

Jepsen stores each run in ``store/<test>/<time>/`` with ``history.edn`` (one op per line) and
``results.edn`` (every checker's result, ``:valid?`` at the top). Knossos's linearizability results
are the maps with an ``:analyzer`` (or ``:configs``, ``:final-paths``); under ``jepsen.independent``
they sit in ``:results``, one per key, with the invalid keys listed in ``:failures``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

HISTORY_NAMES = ("history.edn", "history.jsonl")
"""What a run folder's history is called: Jepsen's, then Fencepost's own run store's."""
RESULTS_NAME = "results.edn"
_ANALYSIS_KEYS = ("analyzer", "configs", "final-paths", "previous-ok", "last-op")


def find_history(directory: str) -> str | None:
    """The history file in a Jepsen (or Fencepost) run folder, or None when it holds none."""
    for name in HISTORY_NAMES:
        path = os.path.join(directory, name)
        if os.path.isfile(path):
            return path
    return None


def results_beside(history: str) -> str | None:
    """The ``results.edn`` in the same folder as ``history``, when there is one."""
    path = os.path.join(os.path.dirname(history), RESULTS_NAME)
    return path if os.path.isfile(path) else None


def _verdict(value: Any) -> bool | str | None:
    """A Jepsen ``:valid?`` as Fencepost writes verdicts: True, False, ``"unknown"``; None when absent."""
    if value is True or value is False:
        return value
    if value is None:
        return None
    return "unknown"


def _merge(verdicts: list[bool | str | None]) -> bool | str | None:
    """Jepsen's merge (false beats unknown beats true); None when there is nothing to merge."""
    known = [v for v in verdicts if v is not None]
    if not known:
        return None
    if False in known:
        return False
    return "unknown" if "unknown" in known else True


def _analyses(node: Any, key: Any = None) -> Iterator[tuple[Any, bool | str | None]]:
    """``(independent key or None, verdict)`` for each Knossos analysis in a results map."""
    if not isinstance(node, dict):
        return
    if "valid?" in node and any(k in node for k in _ANALYSIS_KEYS):
        yield key, _verdict(node.get("valid?"))
        return
    for k, v in node.items():
        if k == "results" and isinstance(v, dict) and "failures" in node:
            for independent_key, sub in v.items():
                yield from _analyses(sub, independent_key)
        else:
            yield from _analyses(v, key)


def jepsen_verdict(results: str) -> dict[str, Any]:
    """What Jepsen concluded in ``results``: the whole run's ``valid``, and ``linearizable``, the merged
    verdict of its Knossos analyses (None when it ran none), with the keys they found invalid.

    An unreadable file gives ``{"results": path, "error": why}``.
    """
    from harness.history.edn_values import parse_value

    out: dict[str, Any] = {"results": results}
    try:
        with open(results, encoding="utf-8") as fh:
            data = parse_value(fh.read())
    except (OSError, UnicodeDecodeError, ValueError) as e:
        out["error"] = f"cannot read {results}: {e}"
        return out
    if not isinstance(data, dict):
        out["error"] = f"{results}: expected a map of checker results"
        return out
    found = list(_analyses(data))
    out["valid"] = _verdict(data.get("valid?"))
    out["linearizable"] = _merge([v for _, v in found])
    out["invalid_keys"] = [k for k, v in found if v is False and k is not None]
    return out


def compare(valid: bool | str | None, jepsen: dict[str, Any]) -> dict[str, Any]:
    """``jepsen`` with ``agree`` (whether Fencepost's ``valid`` matches Jepsen's linearizability verdict,
    or its whole verdict when it ran no Knossos analysis) and, when they differ, a ``note`` saying how."""
    if "error" in jepsen:
        return jepsen
    theirs = jepsen["linearizable"] if jepsen["linearizable"] is not None else jepsen["valid"]
    which = "linearizability verdict" if jepsen["linearizable"] is not None else "verdict"
    out = dict(jepsen, compared=which, agree=theirs == valid)
    if theirs != valid:
        out["note"] = f"DISAGREE: Fencepost says {_word(valid)}, Jepsen's {which} is {_word(theirs)}"
    return out


def _word(valid: Any) -> str:
    """A verdict in a word."""
    return {True: "valid", False: "invalid"}.get(valid, "unknown") if valid is not None else "missing"
