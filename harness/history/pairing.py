"""Pair each invocation with its completion (Jepsen semantics)."""

from __future__ import annotations

from collections.abc import Iterable

from harness.history.op import NEMESIS, Call, Op, OpType


def pair_calls(ops: Iterable[Op], *, include_nemesis: bool = False) -> list[Call]:
    """Pair every invocation with the next completion by the same process.

    An invocation with no completion becomes an ``info`` call whose return time is the end of the
    history. Nemesis ops are skipped unless ``include_nemesis`` is set. The history is assumed valid
    (see :mod:`harness.history.validate`); stray completions are ignored.

    Args:
        ops: the history, in index order.
        include_nemesis: keep the nemesis's fault operations as calls too.

    Returns:
        Calls ordered by invocation.
    """
    calls: list[Call] = []
    open_calls: dict[object, int] = {}
    end = 0
    for op in ops:
        end = op.time if op.time > end else end
        if op.process == NEMESIS and not include_nemesis:
            continue
        if op.type is OpType.INVOKE:
            open_calls[op.process] = len(calls)
            calls.append(
                Call(
                    id=len(calls), process=op.process, f=op.f, key=op.key, input=op.value,
                    output=None, outcome=OpType.INFO, call_time=op.time, return_time=-1,
                    invoke=op, complete=None,
                )
            )
            continue
        pos = open_calls.pop(op.process, None)
        if pos is None:
            continue
        call = calls[pos]
        call.complete = op
        call.outcome = op.type
        call.output = op.value if op.type is OpType.OK or op.type is OpType.FAIL else None
        call.return_time = op.time
    for call in calls:
        if call.return_time < 0 or call.outcome is OpType.INFO:
            call.return_time = max(end, call.call_time) + 1
    return calls
