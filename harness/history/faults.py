"""Fault windows: when each fault was in force, read from the nemesis's ops in a history.

The nemesis (process ``"nemesis"``) invokes ``start-<fault>`` and ``stop-<fault>`` and completes each
with ``info`` or ``ok`` (Jepsen's convention). A window runs from the start's completion to the matching
stop's completion. A fault that is never stopped, or whose stop never completed, lasts to the end of
the history. A start that completed with ``fail`` opened no window; a stop that failed closed none. A
start that completed with an error (it broke or was cancelled part way, so it may have acted) opens its
window at its invocation, as an unfinished start does.
Overlapping windows of one fault are matched first-in, first-out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from harness.history.op import NEMESIS, Call, Op, OpType
from harness.history.pairing import pair_calls

START = "start-"
STOP = "stop-"


@dataclass(frozen=True)
class FaultWindow:
    """One interval during which a fault was (or may have been) in force.

    Attributes:
        fault: the fault's name, such as ``partition``.
        start: nanoseconds since the test started.
        end: nanoseconds since the test started.
        open_ended: True when no completed stop ended it, so it lasts to the history's end.
        value: the start op's value (which nodes, say), as recorded.
    """

    fault: str
    start: int
    end: int
    open_ended: bool = False
    value: object = None

    def contains(self, t: int) -> bool:
        """True if time ``t`` (ns) falls inside the window."""
        return self.start <= t <= self.end


def struck_at(call: Call) -> int:
    """When a ``start-*`` call's fault may first have been in force (ns since the test started): its
    completion, or its invocation when it never completed or completed with an error (it may have acted
    part way)."""
    done = call.complete
    return done.time if done is not None and done.error is None else call.invoke.time


def fault_windows(history: Sequence[Op]) -> list[FaultWindow]:
    """Every fault window in ``history``, ordered by start time."""
    if not history:
        return []
    end_of_history = max(op.time for op in history)
    opened: dict[str, list[tuple[int, object]]] = {}
    windows: list[FaultWindow] = []
    for call in pair_calls([op for op in history if op.process == NEMESIS], include_nemesis=True):
        done = call.complete
        if call.f.startswith(START):
            fault = call.f[len(START):]
            if done is not None and done.type is OpType.FAIL:
                continue
            opened.setdefault(fault, []).append((struck_at(call), call.input))
        elif call.f.startswith(STOP):
            fault = call.f[len(STOP):]
            pending = opened.get(fault)
            if not pending or done is None or done.type is OpType.FAIL:
                continue
            start, value = pending.pop(0)
            windows.append(FaultWindow(fault, start, max(start, done.time), False, value))
    for fault, pending in opened.items():
        for start, value in pending:
            windows.append(FaultWindow(fault, start, max(start, end_of_history), True, value))
    windows.sort(key=lambda w: (w.start, w.fault))
    return windows


def faults_at(windows: Sequence[FaultWindow], t: int) -> list[str]:
    """The faults in force at time ``t`` (ns), each named once."""
    return sorted({w.fault for w in windows if w.contains(t)})
