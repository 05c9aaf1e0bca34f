"""A minimal witness for a violation: the fewest ops of an invalid partition that still fail.

Delta debugging (Zeller & Hildebrandt's ddmin) over the partition's ops, with the checker itself as
the test: a candidate sub-history "fails" when it is proven not linearizable under the same model.
The result is *1-minimal*: it is not linearizable, and removing any one of its ops makes it
linearizable (each such removal is checked, not assumed).

Well formed. A sub-history must pass the history validator, and no op in it may read a value from
nowhere (:meth:`ModelBase.unexplained`: a read of 3 with no write of 3 left, a kv get whose string
the remaining puts and appends cannot spell). Without that rule ddmin cuts the writer away and
returns the lone read, which is not linearizable for a reason the original history never had. So
removing an op also removes the ops that only it could explain (repeatedly; :func:`closure`), and
that is what "removing one op" means above. When the original history itself reads a value from
nowhere, that is the violation, and the rule is not applied.

Info ops are handled soundly by a dominance argument, not by search: an info op may take effect or
not, so removing one only takes options away and can never make an invalid history valid. Every info
op is therefore removed up front (one check confirms it), with the reads only it explains; a
1-minimal witness holds an info op only when it explains a read.

The cost is bounded: each candidate check gets a step budget, and all of them together at most
:data:`BUDGET_FACTOR` times the steps of the original check (with a floor for checks the fast path
decided). When the budget runs out the smallest failing sub-history found so far is kept, marked as
not proven minimal.
"""

from __future__ import annotations

import time
from collections.abc import Callable
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
    """Checks candidate sub-histories, with a shared step budget and a memo of answers.

    With ``closed`` set, each candidate is first closed (:func:`closure`) and the closed candidate is
    what gets checked and kept.
    """

    def __init__(self, part: Partition, encoded: dict[int, tuple[Any, Any]], init: Any, budget: int,
                 max_rss: int | None) -> None:
        self.part = part
        self.encoded = encoded
        self.init = init
        self.closed = False
        self.left = budget
        self.max_rss = max_rss
        self.tests = 0
        self.nodes = 0
        self.memo: dict[tuple[int, ...], bool | str | None] = {}

    def reduce(self, calls: list[Call]) -> list[Call]:
        """The candidate as checked: closed when the rule applies."""
        return closure(calls, self.part.model, self.encoded, self.init) if self.closed else calls  # type: ignore[arg-type]

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


def closure(calls: list[Call], model: ModelBase, encoded: dict[int, tuple[Any, Any]], init: Any) -> list[Call]:
    """``calls`` without the ops that read a value from nowhere, repeatedly (removing a cas can leave
    a read of its value unexplained)."""
    while True:
        bad = set(model.unexplained([encoded[c.id] for c in calls], init))
        if not bad:
            return calls
        calls = [c for k, c in enumerate(calls) if k not in bad]


def well_formed(calls: list[Call]) -> bool:
    """Whether the calls' ops, in history order, pass the history validator (times aside: a subsequence
    of the history keeps its order of times, and a format with advisory times allows them to go back)."""
    from harness.history.validate import Validator

    ops = sorted((op for c in calls for op in (c.invoke, c.complete) if op is not None), key=lambda op: op.index)
    feed = Validator("witness", strict_time=False).feed
    return not any(feed(k, op) for k, op in enumerate(ops, start=1))


def ddmin(items: list[Call], fails: Callable[[list[Call]], bool],
          reduce: Callable[[list[Call]], list[Call]] = lambda c: c) -> list[Call]:
    """Zeller's ddmin: a 1-minimal sublist of ``items`` (which must fail) for which ``fails`` holds.

    Each candidate goes through ``reduce`` first (which may only drop items); the reduced candidate is
    what is tested and kept.
    """
    n = 2
    while len(items) >= 2:
        size = len(items)
        bounds = [size * k // n for k in range(n + 1)]
        chunks = [items[bounds[k]:bounds[k + 1]] for k in range(n)]
        reduced = False
        for chunk in chunks:
            cand = reduce(chunk)
            if cand and len(cand) < size and fails(cand):
                items, n, reduced = cand, 2, True
                break
        if not reduced:
            for k in range(n):
                cand = reduce([c for j, chunk in enumerate(chunks) if j != k for c in chunk])
                if cand and len(cand) < size and fails(cand):
                    items, n, reduced = cand, max(n - 1, 2), True
                    break
        if not reduced:
            if n >= size:
                break
            n = min(2 * n, size)
    return items


def removals(found: list[Call], reduce: Callable[[list[Call]], list[Call]]) -> list[list[Call]]:
    """The sub-histories left by removing each op of ``found`` in turn (then reduced)."""
    return [reduce([c for c in found if c is not drop]) for drop in found]


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
    init = model.init()  # type: ignore[attr-defined]
    encoded = {e.call.id: (e.input, e.output) for e in entries}
    tester = _Tester(part, encoded, init, BUDGET_FACTOR * max(verdict.nodes, BUDGET_FLOOR // BUDGET_FACTOR),
                     max_rss)
    calls = sorted((e.call for e in entries), key=lambda c: c.invoke.index)
    closed = closure(calls, model, encoded, init)
    # The entries are proven not linearizable; if they read nothing from nowhere, no check is needed.
    tester.closed = len(closed) == len(calls) or (bool(closed) and tester.fails(closed))
    definite = tester.reduce([c for c in calls if c.outcome is not OpType.INFO])
    if definite and tester.fails(definite):
        start = definite
    elif tester.fails(tester.reduce(calls)):  # info ops never rescue a history, but they may explain reads
        start = tester.reduce(calls)
    else:
        return None
    found = ddmin(start, tester.fails, tester.reduce)
    minimal = all(not rest or tester.verdict(rest) is True for rest in removals(found, tester.reduce))
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
