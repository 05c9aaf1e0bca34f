"""The timeline view: one horizontal lane per process, each call a bar from invocation to completion.

Bars are coloured by outcome (ok, fail, info); fault windows are shaded across every lane in their
fault's colour; hovering a bar shows the call in full. The page is one self-contained HTML file with no
script, so it opens from disk or inside the report.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.history.faults import fault_windows
from harness.history.op import NEMESIS, Call, Op
from harness.history.pairing import pair_calls
from reports.shading import FaultStyle, fault_style
from reports.templating import environment

MAX_CALLS = 10_000
MIN_WIDTH_PX = 1200
MAX_WIDTH_PX = 40_000
PX_PER_CALL = 24


@dataclass(frozen=True)
class Bar:
    """One call drawn on a lane."""

    left: float
    width: float
    outcome: str
    label: str
    title: str
    unfinished: bool


def _short(value: Any, limit: int = 40) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _describe(c: Call) -> str:
    lines = [f"process {c.process}: {c.f}" + (f" key={_short(c.key)}" if c.key is not None else "")]
    lines.append(f"invoke  {c.call_time / 1e9:.6f}s  value={_short(c.input, 200)}")
    if c.complete is None:
        lines.append("never completed (info)")
    else:
        done = c.complete.time
        lines.append(f"{c.complete.type.value:<7} {done / 1e9:.6f}s  value={_short(c.complete.value, 200)}")
        lines.append(f"latency {(done - c.call_time) / 1e6:.3f} ms")
        if c.complete.error is not None:
            lines.append(f"error   {_short(c.complete.error, 200)}")
    lines.append(f"ops #{c.invoke.index}" + (f", #{c.complete.index}" if c.complete is not None else ""))
    return "\n".join(lines)


def _lane_key(process: Any) -> tuple[int, Any]:
    return (1, 0) if process == NEMESIS else (0, process) if isinstance(process, int) else (0, str(process))


def timeline_html(history: Sequence[Op], title: str = "timeline",
                  styles: Mapping[str, FaultStyle] | None = None) -> str:
    """The timeline of ``history`` as a self-contained HTML page (``styles``: the run's recorded fault styles)."""
    calls = pair_calls(history, include_nemesis=True)
    omitted = max(0, len(calls) - MAX_CALLS)
    calls = calls[:MAX_CALLS]
    t0 = min((op.time for op in history), default=0)
    t1 = max((op.time for op in history), default=t0)
    span_s = max((t1 - t0) / 1e9, 1e-3)
    per_lane: dict[Any, int] = {}
    for c in calls:
        per_lane[c.process] = per_lane.get(c.process, 0) + 1
    width = min(MAX_WIDTH_PX, max(MIN_WIDTH_PX, max(per_lane.values(), default=0) * PX_PER_CALL))
    px_per_s = width / span_s

    def x(t: int) -> float:
        return round((t - t0) / 1e9 * px_per_s, 1)

    lanes: dict[Any, list[Bar]] = {}
    for c in calls:
        end = c.complete.time if c.complete is not None else t1
        left, right = x(c.call_time), x(end)
        label = c.f if c.input is None else f"{c.f} {_short(c.input, 16)}"
        if c.complete is not None and c.complete.value is not None and c.complete.value != c.input:
            label += f" → {_short(c.complete.value, 16)}"
        lanes.setdefault(c.process, []).append(
            Bar(left, max(2.0, right - left), c.outcome.value, label, _describe(c), c.complete is None))
    windows = []
    for w in fault_windows(history):
        style = fault_style(w.fault, styles)
        windows.append({"left": x(w.start), "width": max(2.0, x(w.end) - x(w.start)), "color": style.color,
                        "label": style.label, "fault": w.fault, "open": w.open_ended,
                        "title": f"{w.fault}: {w.start / 1e9:.3f}s to {w.end / 1e9:.3f}s"
                                 + (" (never stopped)" if w.open_ended else "")})
    step = next(s for s in (0.001, 0.01, 0.1, 0.5, 1, 2, 5, 10, 30, 60, 300, 600, 3600, 1e9)
                if s * px_per_s >= 90)
    first = math.ceil(t0 / 1e9 / step)
    ticks = [{"left": x(round(k * step * 1e9)), "label": f"{round(k * step, 3):g}s"}
             for k in range(first, first + int(span_s / step) + 2) if k * step * 1e9 <= t1]
    ordered = [(("nemesis" if p == NEMESIS else f"process {p}"), lanes[p]) for p in sorted(lanes, key=_lane_key)]
    kinds = {w["fault"]: w for w in windows}
    return environment().get_template("timeline.html.j2").render(
        title=title, lanes=ordered, windows=windows, ticks=ticks, width=width, omitted=omitted,
        legend=list(kinds.values()), calls=len(calls))
