"""Tiny hand-written transactional histories for the core checker's tests.

``txn(process, mops, ...)`` describes one transaction by its completed micro-ops (reads filled in); the
invocation gets the same micro-ops with reads unfilled. ``overlapping(...)`` invokes every transaction before
any completes (only the data orders them); ``sequential(...)`` runs them one after another in real time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.history.op import Op, OpType

MS = 1_000_000


@dataclass
class Txn:
    """One transaction: its process, completed micro-ops, outcome and (optional) times in ms."""

    process: int
    mops: list[list[Any]]
    outcome: str = "ok"
    start: float | None = None
    end: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def txn(process: int, mops: list[list[Any]], outcome: str = "ok", start: float | None = None,
        end: float | None = None) -> Txn:
    """A transaction (see the module's docstring)."""
    return Txn(process, mops, outcome, start, end)


def _invoked(mops: list[list[Any]]) -> list[list[Any]]:
    return [[f, k, None if f == "r" else v] for f, k, v in mops]


def history(txns: list[Txn], *, lines: bool = True) -> list[Op]:
    """The ops of transactions whose times are all set, in time order (indices follow)."""
    events: list[tuple[float, int, int, Txn]] = []
    for i, t in enumerate(txns):
        assert t.start is not None
        events.append((t.start, 0, i, t))
        if t.end is not None:
            events.append((t.end, 1, i, t))
    events.sort(key=lambda e: (e[0], e[1], e[2]))
    ops = []
    for index, (time, is_end, _, t) in enumerate(events):
        if is_end:
            value = t.mops if t.outcome == "ok" else _invoked(t.mops)
            op = Op(index, int(time * MS), t.process, OpType(t.outcome), "txn", None, value)
        else:
            op = Op(index, int(time * MS), t.process, OpType.INVOKE, "txn", None, _invoked(t.mops))
        if lines:
            op.extra["line"] = index + 1
        ops.append(op)
    return ops


def overlapping(*txns: Txn) -> list[Op]:
    """Every transaction invoked (at 1, 2, ... ms) before any completes (at 100, 101, ... ms)."""
    for i, t in enumerate(txns):
        t.start = 1 + i if t.start is None else t.start
        t.end = (100 + i if t.outcome != "never" else None) if t.end is None else t.end
    return history(list(txns))


def sequential(*txns: Txn) -> list[Op]:
    """Each transaction invoked after the previous one completed (10 ms apart)."""
    for i, t in enumerate(txns):
        t.start, t.end = 10 * i + 1, 10 * i + 5
    return history(list(txns))
