"""What a failed partition shows a reviewer: the longest linearizable prefix and where it got stuck.

A :class:`Counterexample` is plain data (descriptions are rendered once, while the model is at hand),
so it crosses process boundaries and feeds both the text explanation and the HTML timeline.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from checkers.models.base import INFINITY, UNKNOWN, Entry, ModelBase


@dataclass(slots=True)
class OpView:
    """One op of the failing partition, as rendered.

    Attributes:
        index: the op's position in the partition's entry list.
        call_id: the call's id in the whole history.
        process: the process that made it.
        description: the model's words for it, such as ``read -> 3``.
        outcome: ``ok``, ``fail`` or ``info``.
        call_pos: invocation position in the history.
        return_pos: completion position, or None for an unknown outcome.
        call_line: the invocation's history index.
    """

    index: int
    call_id: int
    process: Any
    description: str
    outcome: str
    call_pos: int
    return_pos: int | None
    call_line: int


@dataclass(slots=True)
class Stuck:
    """An op that could have come next after the prefix, and why it could not."""

    op: int
    reason: str


@dataclass(slots=True)
class Counterexample:
    """Why one partition is not linearizable.

    Attributes:
        label: the partition's key (None when the history has no keys).
        model: the model's name.
        ops: every op of the partition (after pruning), in invocation order.
        initial_state: the initial state, described.
        prefix: ``(op index, state after it)`` for the longest linearizable prefix found.
        stuck: the ops that could be linearized next, each with why it fails.
        blocking: the op whose completion bounds what may come next (it must precede later calls).
    """

    label: Any
    model: str
    ops: list[OpView]
    initial_state: str
    prefix: list[tuple[int, str]] = field(default_factory=list)
    stuck: list[Stuck] = field(default_factory=list)
    blocking: int | None = None

    @property
    def state(self) -> str:
        """The state after the prefix."""
        return self.prefix[-1][1] if self.prefix else self.initial_state


def build_counterexample(label: Any, entries: list[Entry], model: ModelBase, init: Any,
                         prefix: list[int]) -> Counterexample:
    """Replay ``prefix`` and find the ops that could come next, with why each fails.

    Args:
        label: the partition's key.
        entries: the partition's entries, as searched.
        model: the partition's model.
        init: the initial state.
        prefix: entry indices of the longest linearizable prefix, in order.
    """
    step = model.step  # type: ignore[attr-defined]
    views = [
        OpView(i, e.call.id, e.call.process, model.describe_operation(e.input, e.output),
               e.call.outcome.value, e.call_pos, None if e.return_pos >= INFINITY else e.return_pos,
               e.call.invoke.index)
        for i, e in enumerate(entries)
    ]
    cex = Counterexample(label, model.name, views, model.describe_state(init))
    state = init
    done = set()
    for i in prefix:
        ok, state = step(state, entries[i].input, entries[i].output)
        done.add(i)
        cex.prefix.append((i, model.describe_state(state)))
    rest = [i for i in range(len(entries)) if i not in done]
    definite = [i for i in rest if entries[i].output is not UNKNOWN]
    if not definite:
        return cex
    blocking = min(definite, key=lambda i: entries[i].return_pos)
    cex.blocking = blocking
    horizon = entries[blocking].return_pos
    here = model.describe_state(state)
    for i in rest:
        e = entries[i]
        if e.call_pos > horizon:
            continue
        ok, _ = step(state, e.input, e.output)
        if ok:
            reason = f"legal in state {here}, but no linearization of the remaining ops continues from it"
        else:
            reason = f"illegal in state {here}"
        cex.stuck.append(Stuck(i, reason))
    return cex
