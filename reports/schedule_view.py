"""The fault schedule a run planned and what its nemesis did, for the report's "Faults" section.

``schedule.json`` holds the windows computed from the seed (each with its lane and, in a default
campaign, the transition it waits for); the history's nemesis ops say what happened: when each fault
struck, how long it waited for its transition, whom it hit, and when it was undone.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.history.faults import START, STOP, struck_at
from harness.history.op import NEMESIS, Op
from harness.history.pairing import pair_calls

SHOWN_IN_START = ("target", "trigger", "triggered_after_s")


@dataclass(frozen=True)
class StruckFault:
    """One fault as the history records it.

    Attributes:
        fault: the package name.
        at_s: seconds into the test when it struck (its start completed, or was invoked if it never did
            or ended in an error, when it may have acted part way).
        until_s: seconds into the test when its stop completed; None if it was never undone in the history.
        target: the target chosen for it.
        trigger: the transition it waited for, if any, and ``waited_s``, how long (None: it never came).
        did: what the start reported (the nodes killed, the grudge...), in short, or its error.
    """

    fault: str
    at_s: float
    until_s: float | None
    target: str
    trigger: str | None
    waited_s: float | None
    did: str


@dataclass(frozen=True)
class ScheduleView:
    """The planned windows and the faults that struck."""

    planned: int
    lanes: int
    triggered: int
    struck: list[StruckFault]
    stored: bool
    """Whether the run folder has ``schedule.json`` (a run of an older Fencepost may not)."""


def _short(value: Any) -> str:
    if not isinstance(value, dict):
        return "" if value is None else str(value)
    return "; ".join(f"{k}: {json.dumps(v, sort_keys=True)}" for k, v in value.items() if k not in SHOWN_IN_START)


def struck_faults(history: Sequence[Op]) -> list[StruckFault]:
    """Every ``start-*`` of the nemesis with its matching ``stop-*`` (first in, first out per fault)."""
    calls = pair_calls([op for op in history if op.process == NEMESIS], include_nemesis=True)
    out: list[StruckFault] = []
    open_by_fault: dict[str, list[int]] = {}
    stops: dict[int, float] = {}
    for call in calls:
        if call.f.startswith(START):
            fault = call.f[len(START):]
            done = call.complete
            begun = dict(call.input) if isinstance(call.input, dict) else {}
            if done is None:
                did = ""
            elif done.error is not None:  # broke off part way: the report says why
                did = f"error: {done.error}"
            else:
                did = _short(done.value)
            waited = begun.get("triggered_after_s")
            out.append(StruckFault(fault, round(struck_at(call) / 1e9, 3), None, str(begun.get("target", "")),
                                   begun.get("trigger"), float(waited) if waited is not None else None, did))
            open_by_fault.setdefault(fault, []).append(len(out) - 1)
        elif call.f.startswith(STOP):
            pending = open_by_fault.get(call.f[len(STOP):])
            if pending and call.complete is not None:
                stops[pending.pop(0)] = round(call.complete.time / 1e9, 3)
    return [StruckFault(f.fault, f.at_s, stops.get(i), f.target, f.trigger, f.waited_s, f.did)
            for i, f in enumerate(out)]


def schedule_view(run_dir: Path, history: Sequence[Op] | None) -> ScheduleView | None:
    """The run's schedule and struck faults; None when it planned no windows and struck none."""
    planned: list[dict[str, Any]] = []
    path = run_dir / "schedule.json"
    if path.is_file():
        try:
            loaded = json.loads(path.read_text(encoding="utf-8"))
            planned = [w for w in loaded if isinstance(w, dict)] if isinstance(loaded, list) else []
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            planned = []
    struck = struck_faults(history) if history else []
    if not planned and not struck:
        return None
    lanes = len({int(w.get("lane", 0)) for w in planned}) or 1
    triggered = sum(1 for w in planned if w.get("trigger"))
    return ScheduleView(len(planned), lanes, triggered, struck, path.is_file())
