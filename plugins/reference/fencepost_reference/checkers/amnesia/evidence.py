"""What the amnesia checker reads besides the history: node event logs, final state dumps, wipes.

Everything comes from the run folder: ``nodes/<node>/events.jsonl`` (node and operator event logs),
``nodes/<node>/dump.json`` (each node's final per-tablet state), and ``timing.json`` (the wall-clock
start, to place wall-clock events on the history's timeline).
"""

from __future__ import annotations

import heapq
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fencepost import NEMESIS, UNKNOWN, Op, OpType
from fencepost_reference.checkers.dumps import node_dumps


@dataclass
class Evidence:
    """Event logs, dumps and fault records for one run.

    Attributes:
        events: every event of every node and operator, merged in wall-clock order, but each process's
            own events always in the order it logged them (a clock fault may move a node's clock back);
            ``source`` names the process whose log it came from (an operator's events also carry ``node``:
            the node they concern).
        dumps: node -> its final dump (``{"uuid", "tablets": {tablet: state}}``), nodes that answered only.
        wipes: ``(history time ns, node, old uuid)`` for each wipe the nemesis applied.
        start_wall_s: the history's time zero on the wall clock, if recorded.
    """

    events: list[dict[str, Any]] = field(default_factory=list)
    dumps: dict[str, dict[str, Any]] = field(default_factory=dict)
    wipes: list[tuple[int, str, str | None]] = field(default_factory=list)
    start_wall_s: float | None = None

    def history_ns(self, wall_s: float) -> int | None:
        """A wall-clock time as ns on the history's timeline (None if the start is unknown)."""
        if self.start_wall_s is None:
            return None
        return int((wall_s - self.start_wall_s) * 1e9)


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    out = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue  # a torn last line from a killed node
        if isinstance(rec, dict):
            out.append(rec)
    return out


def wipes_in(history: Sequence[Op]) -> list[tuple[int, str, str | None]]:
    """The disks the nemesis took away: completed fault starts that name a node ``wiped`` (a wipe) or
    ``reformatted`` (a node that refused its damaged disk and was started with ``--reformat``, as ``corrupt``'s
    deleted metadata does), with its old UUID. Either way the node has lost its disk and must come back new.
    When only wipes counted, a reformatted node of bug ``no-uuid-check`` ran under its old UUID for the rest of
    a run, and no rule saw it."""
    found = []
    for op in history:
        if (op.process == NEMESIS and op.f.startswith("start-") and op.type is not OpType.INVOKE
                and op.error is None and isinstance(op.value, dict)):
            uuids = op.value.get("old_uuids") or {}
            for node in [*op.value.get("wiped", []), *op.value.get("reformatted", [])]:
                found.append((op.time, node, uuids.get(node)))
    return found


def load_evidence(run_dir: Path | None, history: Sequence[Op]) -> Evidence:
    """Read everything the run folder holds (missing pieces stay empty)."""
    ev = Evidence(wipes=wipes_in(history))
    if run_dir is None:
        return ev
    timing = run_dir / "timing.json"
    if timing.exists():
        ev.start_wall_s = float(json.loads(timing.read_text())["start_wall_s"])
    nodes = run_dir / "nodes"
    logs: list[list[dict[str, Any]]] = []
    if nodes.is_dir():
        for node_dir in sorted(p for p in nodes.iterdir() if p.is_dir()):
            events = node_dir / "events.jsonl"
            if events.exists():
                logs.append([{**rec, "source": node_dir.name} for rec in _read_jsonl(events)])
        ev.dumps = node_dumps(nodes)
    # heapq.merge only ever takes the head of each log, so a log whose timestamps go backwards keeps its order.
    ev.events = list(heapq.merge(*logs, key=lambda e: float(e.get("ts", 0.0))))
    return ev


def trace_verdict(counts: dict[str, int], violations: list[dict[str, Any]], had_events: bool, judged: str,
                  all_ok: str) -> dict[str, Any]:
    """The result of a white-box trace check: invalid with the first five explanations and the earliest
    violation's history time when there are violations, unknown when the run left no event logs (so no
    ``judged``, e.g. "contracts", could be judged), else valid with ``all_ok``. ``counts`` (what was
    judged, e.g. ``{"contracts": 4}``) lead the result."""
    times = [v["at_ns"] for v in violations if isinstance(v.get("at_ns"), int)]
    result: dict[str, Any] = {**counts, "violations": violations[:100]}
    if violations:
        result["valid"] = False
        result["explanation"] = "\n".join(v["explanation"] for v in violations[:5])
        result["first_anomaly_s"] = round(max(0, min(times)) / 1e9, 3) if times else None
    elif not had_events:
        result["valid"] = UNKNOWN
        result["explanation"] = f"No node event logs were collected, so {judged} could not be judged."
    else:
        result["valid"] = True
        result["explanation"] = all_ok
    return result
