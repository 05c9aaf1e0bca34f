"""A minimal witness for a violation: the fewest ops of an invalid partition that still fail.

Delta debugging (Zeller & Hildebrandt's ddmin) over the partition's ops, with the checker itself as
the test: a candidate sub-history "fails" when it is proven not linearizable under the same model.
The result is *1-minimal*: it is not linearizable, and removing any one of its ops makes it
linearizable (each such removal is checked, not assumed).

Info ops are handled soundly by a dominance argument, not by search: an info op may take effect or
not, so removing one only takes options away and can never make an invalid history valid. Every info
op is therefore removed up front (one check confirms it), and a 1-minimal witness never holds one.
Removing a definite op (both its invocation and its completion) keeps the history well formed; every
candidate is still run through the history validator, and one that is not well formed is not used.

The cost is bounded: each candidate check gets a step budget, and all of them together at most
:data:`BUDGET_FACTOR` times the steps of the original check (with a floor for checks the fast path
decided). When the budget runs out the smallest failing sub-history found so far is kept, marked as
not proven minimal.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from checkers.models.base import Entry, ModelBase, Partition
from harness.history.op import Call, OpType

if TYPE_CHECKING:
    from checkers.linearizability.checker import PartitionVerdict
    from checkers.linearizability.counterexample import Counterexample

BUDGET_FACTOR = 4
"""The witness search's steps, at most, in multiples of the original check's (see :data:`BUDGET_FLOOR`)."""
BUDGET_FLOOR = 200_000
"""Search steps the witness search may always spend, however cheap the original check was."""


@dataclass(slots=True)
class Witness:
    """A minimal failing sub-history of one invalid partition.

    Attributes:
        label: the partition's key.
        model: the model's name.
        calls: the witness's calls, in invocation order (each carries its original ops).
        descriptions: the model's words for each call, as ``calls``.
        minimal: True when every single-op removal was checked and found linearizable.
        original: ops in the failing part of the partition the search started from.
        tests: candidate sub-histories checked.
        nodes: search steps spent on them.
        seconds: wall time spent.
        counterexample: the witness's own explanation (longest linearizable prefix, stuck ops).
        sources: op index -> ``file:line`` where the op was read (filled in by the file driver).
    """

    label: Any
    model: str
    calls: list[Call]
    descriptions: list[str]
    minimal: bool
    original: int
    tests: int = 0
    nodes: int = 0
    seconds: float = 0.0
    counterexample: Counterexample | None = None
    sources: dict[int, str] = field(default_factory=dict)

    def source(self, call: Call) -> str:
        """Where ``call`` was invoked and completed, as ``file:line`` (or ``file:line..line``)."""
        at = self.sources.get(call.invoke.index)
        if at is None:
            return f"history index {call.invoke.index}"
        if call.complete is not None and call.complete.index in self.sources:
            end = self.sources[call.complete.index].rsplit(":", 1)[-1]
            return f"{at}..{end}"
        return at


class _Tester:
    """Checks candidate sub-histories, with a shared step budget and a memo of answers."""

    def __init__(self, part: Partition, budget: int, max_rss: int | None) -> None:
        self.part = part
        self.left = budget
        self.max_rss = max_rss
        self.tests = 0
        self.nodes = 0
        self.memo: dict[tuple[int, ...], bool | str | None] = {}

    def verdict(self, calls: list[Call]) -> bool | str | None:
        """True, False, or None when the budget ran out or the candidate is not well formed."""
        key = tuple(c.id for c in calls)
        if key in self.memo:
            return self.memo[key]
        if self.left <= 0:
            return None
        from checkers.linearizability.checker import PartitionCheck

        got: bool | str | None = None
        if well_formed(calls):
            check = PartitionCheck(Partition(self.part.label, self.part.model, calls), split=False)
            got = check.advance(self.left, None, self.max_rss)
            self.tests += 1
            self.nodes += check.verdict.nodes
            self.left -= max(1, check.verdict.nodes)
            if got == "unknown":
                got = None
        self.memo[key] = got
        return got

    def fails(self, calls: list[Call]) -> bool:
        """True only when ``calls`` is proven not linearizable."""
        return self.verdict(calls) is False


def well_formed(calls: list[Call]) -> bool:
    """Whether the calls' ops, in history order, pass the history validator."""
    from harness.history.validate import Validator

    ops = sorted((op for c in calls for op in (c.invoke, c.complete) if op is not None), key=lambda op: op.index)
    feed = Validator("witness").feed
    return not any(feed(k, op) for k, op in enumerate(ops, start=1))


def ddmin(items: list[Call], fails: Any) -> list[Call]:
    """Zeller's ddmin: a 1-minimal sublist of ``items`` (which must fail) for which ``fails`` holds."""
    n = 2
    while len(items) >= 2:
        size = len(items)
        bounds = [size * k // n for k in range(n + 1)]
        chunks = [items[bounds[k]:bounds[k + 1]] for k in range(n)]
        reduced = False
        for chunk in chunks:
            if len(chunk) < size and fails(chunk):
                items, n, reduced = chunk, 2, True
                break
        if not reduced:
            for k in range(n):
                rest = [c for j, chunk in enumerate(chunks) if j != k for c in chunk]
                if len(rest) < size and fails(rest):
                    items, n, reduced = rest, max(n - 1, 2), True
                    break
        if not reduced:
            if n >= size:
                break
            n = min(2 * n, size)
    return items


def find_witness(part: Partition, entries: list[Entry], verdict: PartitionVerdict, *,
                 max_rss: int | None = None) -> Witness | None:
    """A 1-minimal failing sub-history of the invalid partition ``part``, or None if none is proven.

    Args:
        part: the partition (its model and label are used for every candidate).
        entries: the failing part's entries as searched (a split partition's failing component).
        verdict: the partition's verdict (its search steps set the budget).
        max_rss: the memory bound for every candidate check.
    """
    started = time.monotonic()
    model: ModelBase = part.model  # type: ignore[assignment]
    tester = _Tester(part, BUDGET_FACTOR * max(verdict.nodes, BUDGET_FLOOR // BUDGET_FACTOR), max_rss)
    calls = sorted((e.call for e in entries), key=lambda c: c.invoke.index)
    definite = [c for c in calls if c.outcome is not OpType.INFO]
    if tester.fails(definite):
        start = definite
    elif tester.fails(calls):  # only when a check ran out of budget: info ops never rescue a history
        start = calls
    else:
        return None
    found = ddmin(start, tester.fails)
    minimal = all(tester.verdict([c for c in found if c is not drop]) is True for drop in found)
    return _witness(part, model, found, minimal, len(calls), tester, started)


def _witness(part: Partition, model: ModelBase, found: list[Call], minimal: bool, original: int,
             tester: _Tester, started: float) -> Witness:
    """The witness, with its own counterexample."""
    from checkers.linearizability.checker import PartitionCheck

    check = PartitionCheck(Partition(part.label, part.model, found), split=False)
    check.advance(None, None, tester.max_rss)
    check.explain()
    descriptions = []
    encoded = {id(e.call): e for e in check.entries}
    for c in found:
        e = encoded.get(id(c))
        descriptions.append(model.describe_operation(e.input, e.output) if e is not None else c.f)
    return Witness(part.label, model.name, found, descriptions, minimal, original, tester.tests, tester.nodes,
                   time.monotonic() - started, check.verdict.counterexample)
