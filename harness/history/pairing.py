"""Pair each invocation with its completion (Jepsen semantics)."""

from __future__ import annotations

from collections.abc import Iterable

from harness.history.op import NEMESIS, Call, Op, OpType


def pair_calls(ops: Iterable[Op], *, include_nemesis: bool = False, end: int = 0) -> list[Call]:
    """Pair every invocation with the next completion by the same process.

    The nemesis's ops pair by process and function: the default campaign's lanes act at once, so a
    ``start-kill`` may be invoked while a ``start-partition`` is still under way (one package is never in
    two actions at once). A history with one action at a time pairs the same either way.

    An invocation with no completion becomes an ``info`` call whose return time is the end of the
    history. Nemesis ops are skipped unless ``include_nemesis`` is set. The history is assumed valid
    (see :mod:`harness.history.validate`); stray completions are ignored.

    Args:
        ops: the history, in index order.
        include_nemesis: keep the nemesis's fault operations as calls too.
        end: the history's last time, when ``ops`` are only a share of it.

    Returns:
        Calls ordered by invocation.
    """
    calls: list[Call] = []
    append = calls.append
    open_calls: dict[object, Call] = {}
    invoke, ok, fail, info = OpType.INVOKE, OpType.OK, OpType.FAIL, OpType.INFO
    for op in ops:
        t = op.time
        if t > end:
            end = t
        process = op.process
        slot: object = process
        if type(process) is not int and process == NEMESIS:
            if not include_nemesis:
                continue
            slot = (NEMESIS, op.f)
        kind = op.type
        if kind is invoke:
            call = Call(len(calls), process, op.f, op.key, op.value, None, info, t, -1, op, None)
            open_calls[slot] = call
            append(call)
            continue
        opened = open_calls.pop(slot, None)
        if opened is None:
            continue
        opened.complete = op
        opened.outcome = kind
        opened.output = op.value if kind is ok or kind is fail else None
        opened.return_time = t
    for call in calls:
        if call.return_time < 0 or call.outcome is info:
            call.return_time = max(end, call.call_time) + 1
    return calls
