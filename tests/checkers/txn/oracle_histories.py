"""Small transactional histories written by hand or drawn at random, as the contract's Op lists.

A transaction is written once, with its reads as observed; :func:`build` makes its invocation (reads unfilled) and
its completion (``ok``: the observed micro-ops; ``fail`` / ``info``: the invoked ones), and numbers the events in
time order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness.history.op import Op, OpType


@dataclass(frozen=True)
class T:
    """One transaction of a hand-written history.

    Attributes:
        process: the process that runs it.
        ops: its micro-ops, reads as observed (for ``fail`` / ``info`` the reads are dropped to None).
        outcome: ``ok``, ``fail`` or ``info``.
        start: invocation time, in arbitrary units (ties keep the order the transactions are given in).
        end: completion time; None for an ``info`` transaction that never completes.
    """

    process: int
    ops: Sequence[Sequence[Any]]
    outcome: str = "ok"
    start: int = 0
    end: int | None = 1


def invocation(ops: Sequence[Sequence[Any]]) -> list[list[Any]]:
    """The micro-ops as invoked: reads unfilled."""
    return [[f, k, None if f == "r" else v] for f, k, v in ops]


def _events(txns: Sequence[T]) -> list[tuple[int, int, int, Op]]:
    """Each transaction's invocation and completion, sorted by time (invocations first, then given order)."""
    events: list[tuple[int, int, int, Op]] = []
    for n, t in enumerate(txns):
        inv = Op(0, 0, t.process, OpType.INVOKE, "txn", value=invocation(t.ops))
        events.append((t.start, 0, n, inv))
        if t.end is None:
            continue
        assert t.end > t.start, t
        value = [list(m) for m in t.ops] if t.outcome == "ok" else invocation(t.ops)
        events.append((t.end, 1, n, Op(0, 0, t.process, OpType(t.outcome), "txn", value=value)))
    events.sort(key=lambda e: (e[0], e[1], e[2]))
    return events


def build(txns: Sequence[T], lines: bool = False) -> list[Op]:
    """The history of ``txns``: each one's invocation and completion, indexed in time order.

    Args:
        txns: the transactions.
        lines: put each op's 1-based position in ``extra["line"]``, as a reader of a one-op-a-line file does.
    """
    out = []
    for i, (when, _, _, op) in enumerate(_events(txns)):
        op.index = i
        op.time = when * 1_000_000 + i  # strictly increasing, in the order of the indexes
        if lines:
            op.extra["line"] = i + 1
        out.append(op)
    return out


def event_indexes(txns: Sequence[T]) -> list[tuple[int, int | None]]:
    """For each transaction, in the order given, the indexes :func:`build` gives its invocation and completion."""
    invoked: dict[int, int] = {}
    completed: dict[int, int] = {}
    for i, (_, kind, n, _) in enumerate(_events(txns)):
        (completed if kind else invoked)[n] = i
    return [(invoked[n], completed.get(n)) for n in range(len(txns))]


def sequential(*groups: Sequence[T]) -> list[T]:
    """Transactions in real-time groups: those in one group overlap, and each group ends before the next starts."""
    out: list[T] = []
    for g, group in enumerate(groups):
        for t in group:
            end = None if t.end is None else 10 * g + 5
            out.append(T(t.process, t.ops, t.outcome, 10 * g, end))
    return out
