"""The fault schedule a run planned and what its nemesis did, for the report's "Faults" section.

``schedule.json`` holds the windows computed from the seed (each with its lane and, in a default
campaign, the transition it waits for or the classic it does); the history's nemesis ops say what happened:
when each fault struck, how long it waited for its transition, whom it hit, and when it was undone. For a
default campaign the section also lists the classics (:mod:`harness.classics`): which ran, which were
planned and did not act, which the run was too short for, and which it could not do, and why.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.classics import rows as classic_rows
from harness.history.faults import START, STOP, struck_at
from harness.history.op import NEMESIS, Op
from harness.history.pairing import pair_calls

SHOWN_IN_START = ("target", "trigger", "triggered_after_s", "classic")


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
        classic: the classic it did (:mod:`harness.classics`), if its window was one.
        acted: whether its start completed without an error and without skipping (a leader-deposed cut with no
            leader known, a wipe the system refused just then).
    """

    fault: str
    at_s: float
    until_s: float | None
    target: str
    trigger: str | None
    waited_s: float | None
    did: str
    classic: str | None = None
    acted: bool = True


@dataclass(frozen=True)
class ClassicView:
    """One classic fault in the report: ``status`` is ``ran``, ``did not act`` (its start broke off or skipped),
    ``did not strike`` (planned, and no start in the history), ``planned`` (no history to tell), ``left out``
    (the run was too short) or ``not offered``; ``detail`` says when and what it did, or why."""

    classic: str
    what: str
    status: str
    detail: str


@dataclass(frozen=True)
class ScheduleView:
    """The planned windows and the faults that struck."""

    planned: int
    lanes: int
    triggered: int
    struck: list[StruckFault]
    stored: bool
    """Whether the run folder has ``schedule.json`` (a run of an older Fencepost may not)."""
    classics: list[ClassicView] = field(default_factory=list)
    """The classics, for a default campaign (empty for any other run, and for one from before them)."""


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
            acted = (done is not None and done.error is None
                     and not (isinstance(done.value, dict) and "skipped" in done.value))
            classic = begun.get("classic")
            out.append(StruckFault(fault, round(struck_at(call) / 1e9, 3), None, str(begun.get("target", "")),
                                   begun.get("trigger"), float(waited) if waited is not None else None, did,
                                   classic if isinstance(classic, str) else None, acted))
            open_by_fault.setdefault(fault, []).append(len(out) - 1)
        elif call.f.startswith(STOP):
            pending = open_by_fault.get(call.f[len(STOP):])
            if pending and call.complete is not None:
                stops[pending.pop(0)] = round(call.complete.time / 1e9, 3)
    return [StruckFault(f.fault, f.at_s, stops.get(i), f.target, f.trigger, f.waited_s, f.did, f.classic, f.acted)
            for i, f in enumerate(out)]


def classic_views(config: Mapping[str, Any], planned: Sequence[Mapping[str, Any]],
                  struck: Sequence[StruckFault] | None) -> list[ClassicView]:
    """The classics of a run whose test.json is ``config``, planned as ``planned`` (schedule.json's windows), with
    what the history's ``struck`` faults say of each (None: the run has no history)."""
    extra = config.get("extra")
    out: list[ClassicView] = []
    for row in classic_rows(extra if isinstance(extra, Mapping) else {}, planned):
        name, status = row["classic"], row["status"]
        if status != "planned":
            out.append(ClassicView(name, row["what"], status, row["why"]))
            continue
        planned_at = f"planned at {float(row['at']):.1f} s ({row['package']} {row['target']})"
        if struck is None:
            out.append(ClassicView(name, row["what"], "planned", planned_at))
            continue
        mine = [f for f in struck if f.classic == name]
        hit = next((f for f in mine if f.acted), None)
        if hit is not None:
            out.append(ClassicView(name, row["what"], "ran", f"at {hit.at_s:.1f} s ({hit.fault} {hit.target})"
                                   + (f": {hit.did}" if hit.did else "")))
        elif mine:
            out.append(ClassicView(name, row["what"], "did not act", f"at {mine[0].at_s:.1f} s: {mine[0].did}"))
        else:
            out.append(ClassicView(name, row["what"], "did not strike",
                                   f"{planned_at}; its package was busy in the other lane until the window's end, "
                                   f"or the run ended first"))
    return out


def schedule_view(run_dir: Path, history: Sequence[Op] | None,
                  config: Mapping[str, Any] | None = None) -> ScheduleView | None:
    """The run's schedule and struck faults, and for a default campaign its classics (from ``config``, its
    test.json); None when it planned no windows and struck none."""
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
    classics = classic_views(config or {}, planned, struck if history is not None else None)
    return ScheduleView(len(planned), lanes, triggered, struck, path.is_file(), classics)
