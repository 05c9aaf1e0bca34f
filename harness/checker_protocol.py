"""The Checker protocol, validity values, and how verdicts merge (Jepsen's rules).

* ``valid`` is ``True``, ``False`` or ``"unknown"``.
* Merging: invalid beats unknown, unknown beats valid.
* A checker that raises becomes ``unknown`` and keeps its error; it never fails silently.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from harness.history.op import Op

Validity = bool | Literal["unknown"]
UNKNOWN: Literal["unknown"] = "unknown"


def merge_validity(values: Sequence[Validity]) -> Validity:
    """The worst of several verdicts: False, then "unknown", then True (True for none)."""
    if any(v is False for v in values):
        return False
    if any(v != True for v in values):  # noqa: E712 - "unknown" and anything unexpected
        return UNKNOWN
    return True


@dataclass
class CheckContext:
    """What a checker may use besides the history.

    Attributes:
        test: the test config (test.json).
        run_dir: the run's folder, for node logs and dumps and for writing plots; None for a bare history.
        options: checker-specific options.
        system: the plugin of the system the run tested (a :class:`harness.plugin_api.SystemPlugin`), when the
            check runs after a run or a recheck; None for a bare history.
    """

    test: Mapping[str, Any] = field(default_factory=dict)
    run_dir: Path | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    system: object | None = None


@runtime_checkable
class Checker(Protocol):
    """Judges a history. ``name`` keys its result in results.json."""

    name: str

    def check(self, history: Sequence[Op], ctx: CheckContext) -> dict[str, Any]:
        """Return a JSON-ready result holding at least ``valid`` (True, False or "unknown")."""
        ...


def run_checkers(checkers: Sequence[Checker], history: Sequence[Op], ctx: CheckContext) -> dict[str, Any]:
    """Run every checker, turning a crash into ``unknown`` with its error, and merge the verdicts.

    Returns:
        ``{"valid": merged, "checkers": {name: result}}``; each result gains ``seconds``.
    """
    results: dict[str, Any] = {}
    for checker in checkers:
        start = time.perf_counter()
        try:
            result = dict(checker.check(history, ctx))
            if "valid" not in result:
                raise ValueError(f"checker {checker.name} returned no 'valid'")
        except Exception as e:
            result = {
                "valid": UNKNOWN,
                "error": f"{type(e).__name__}: {e}",
                "traceback": traceback.format_exc(),
            }
        result["seconds"] = round(time.perf_counter() - start, 4)
        results[checker.name] = result
    return {"valid": merge_validity([r["valid"] for r in results.values()]), "checkers": results}
