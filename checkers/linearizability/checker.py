"""Check a history: encode, partition, prune, fast path, search, and merge the verdicts.

Partitions (independent keys) are checked apart, P-compositionality, and in parallel across processes
when there is enough work to pay for starting them. The check stops at the first violation unless
asked for all of them. When the time budget runs out, the verdict is ``"unknown"``, never valid.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from checkers.linearizability.search import Search
from checkers.models.base import INFINITY, UNKNOWN, Entry, ModelBase, Partition
from harness.history.op import Call

if TYPE_CHECKING:
    from checkers.linearizability.counterexample import Counterexample

PARALLEL_MIN_OPS = 20_000
"""Below this many calls, forking workers costs more than it saves."""


@dataclass(slots=True)
class PartitionVerdict:
    """The verdict on one partition.

    Attributes:
        label: the partition's key.
        valid: True, False or ``"unknown"``.
        ops: entries searched, after pruning.
        pruned: unknown-outcome entries dropped because nothing observes them.
        method: ``fast-path``, ``search`` or ``empty``.
        nodes: search steps tried.
        counterexample: why it is not linearizable, when it is not.
    """

    label: Any
    valid: bool | str | None
    ops: int = 0
    pruned: int = 0
    method: str = "search"
    nodes: int = 0
    counterexample: Counterexample | None = None


@dataclass(slots=True)
class CheckResult:
    """The verdict on a whole history.

    Attributes:
        valid: True, False or ``"unknown"`` (false beats unknown beats true).
        model: the model's name.
        ops: calls in the history (fail calls included).
        seconds: wall time of the check.
        partitions: how many independent partitions there were.
        checked: how many were checked before the first violation stopped the check.
        invalid_keys: labels of the non-linearizable partitions found.
        unknown_keys: labels of partitions that ran out of time.
        failures: the invalid partitions' verdicts, with counterexamples.
    """

    valid: bool | str
    model: str
    ops: int
    seconds: float = 0.0
    partitions: int = 0
    checked: int = 0
    invalid_keys: list[Any] = field(default_factory=list)
    unknown_keys: list[Any] = field(default_factory=list)
    failures: list[PartitionVerdict] = field(default_factory=list)


def encode(calls: Sequence[Call], model: ModelBase) -> list[Entry]:
    """The model's entries for ``calls``, ordered by invocation; fail calls the model drops are gone."""
    entries: list[Entry] = []
    append = entries.append
    model_encode = model.encode
    for c in calls:
        enc = model_encode(c)
        if enc is None:
            continue
        inp, out = enc
        complete = c.complete
        append(Entry(c, inp, out, c.invoke.index, INFINITY if out is UNKNOWN or complete is None else complete.index))
    return entries


class PartitionCheck:
    """One partition's check: pruning and the fast path up front, then a resumable search.

    Attributes:
        verdict: the partition's verdict so far (``valid`` is None while undecided).
    """

    def __init__(self, part: Partition, *, fast: bool = True, guided: bool = True) -> None:
        self.guided = guided
        self.model: ModelBase = part.model  # type: ignore[assignment]
        entries = encode(part.calls, self.model)
        self.init = self.model.init()  # type: ignore[attr-defined]
        self.entries = self.model.prune(entries)
        self.verdict = PartitionVerdict(part.label, None, len(self.entries), len(entries) - len(self.entries))
        self.search: Search | None = None
        if not self.entries:
            self.verdict.valid, self.verdict.method = True, "empty"
            return
        if fast:
            quick = self.model.fast_check(self.entries, self.init)
            if quick is not None:
                self.verdict.valid, self.verdict.method = quick, "fast-path"
                return
        self.search = Search(self.entries, self.model, self.init, guided=guided)

    @property
    def valid(self) -> bool | str | None:
        """True, False, ``"unknown"``, or None while undecided."""
        return self.verdict.valid

    def advance(self, max_nodes: int | None = None, deadline: float | None = None) -> bool | str | None:
        """Search on within the budget; the verdict, or None if still undecided."""
        if self.verdict.valid is None and self.search is not None:
            self.verdict.valid = self.search.run(max_nodes, deadline)
            self.verdict.nodes = self.search.nodes
        return self.verdict.valid

    def explain(self, deadline: float | None = None) -> None:
        """Attach a counterexample to an invalid verdict (searching for one if the fast path decided)."""
        if self.verdict.valid is not False:
            return
        if self.search is None:
            self.search = Search(self.entries, self.model, self.init, guided=self.guided)
        if self.search.valid is None:
            self.search.run(EXPLAIN_NODES, deadline)
        from checkers.linearizability.counterexample import build_counterexample

        self.verdict.counterexample = build_counterexample(
            self.verdict.label, self.entries, self.model, self.init, self.search.best)


EXPLAIN_NODES = 2_000_000
"""Search steps spent finding a counterexample for a partition the fast path already failed."""


def check_partition(part: Partition, *, deadline: float | None = None, fast: bool = True,
                    explain: bool = True, guided: bool = True) -> PartitionVerdict:
    """Check one partition to the end (or the deadline); explain a failure.

    Args:
        part: the calls and the model for them.
        deadline: :func:`time.monotonic` instant after which the verdict is unknown.
        fast: try the model's polynomial fast path first.
        guided: let the model prune dead configurations (:meth:`ModelBase.feasible`).
        explain: build a counterexample for an invalid verdict.
    """
    pc = PartitionCheck(part, fast=fast, guided=guided)
    if pc.advance(None, deadline) is None:
        pc.verdict.valid = "unknown"
    if explain:
        pc.explain(deadline)
    return pc.verdict


def merge(verdicts: Sequence[bool | str]) -> bool | str:
    """Jepsen's merge: false beats unknown beats true."""
    if False in verdicts:
        return False
    if "unknown" in verdicts:
        return "unknown"
    return True


_PARTS: list[Partition] = []
_OPTIONS: dict[str, Any] = {}


def _check_index(i: int) -> PartitionVerdict:
    """Worker entry point: check the inherited partition ``i``."""
    return check_partition(_PARTS[i], **_OPTIONS)


def check_calls(calls: Sequence[Call], model: ModelBase, *, partition: bool = True,
                timeout: float | None = None, all_violations: bool = False, fast: bool = True,
                explain: bool = True, workers: int | None = None, guided: bool = True) -> CheckResult:
    """Check a history's calls against ``model``.

    Args:
        calls: the paired calls.
        model: the model (keyed models split per key).
        partition: split into independent partitions; False checks one partition (for benchmarks).
        timeout: seconds before the verdict becomes unknown.
        all_violations: keep checking after the first invalid partition.
        fast: allow polynomial fast paths.
        guided: let the model prune dead configurations (False only to measure what that buys).
        explain: build counterexamples.
        workers: processes to use; None picks by the amount of work.
    """
    start = time.monotonic()
    deadline = None if timeout is None else start + timeout
    calls = list(calls)
    parts = model.partition(calls) if partition else [Partition(None, model, calls)]  # type: ignore[arg-type]
    result = CheckResult(True, model.name, len(calls), partitions=len(parts))
    options: dict[str, Any] = {"deadline": deadline, "fast": fast, "explain": explain, "guided": guided}
    if workers is None:
        workers = min(len(parts), os.cpu_count() or 1) if len(calls) >= PARALLEL_MIN_OPS else 1
    if workers > 1 and len(parts) > 1:
        verdicts = _parallel(parts, options, workers, all_violations)
    else:
        verdicts = _race(parts, deadline=deadline, fast=fast, explain=explain, all_violations=all_violations,
                         guided=guided)
    return fill_result(result, verdicts, start)


def fill_result(result: CheckResult, verdicts: list[PartitionVerdict], start: float) -> CheckResult:
    """Complete ``result`` from the partitions' verdicts (in key order) and the monotonic ``start`` time."""
    result.checked = len(verdicts)
    result.valid = merge([v.valid if v.valid is not None else "unknown" for v in verdicts])
    result.invalid_keys = [v.label for v in verdicts if v.valid is False]
    result.unknown_keys = [v.label for v in verdicts if v.valid == "unknown"]
    result.failures = [v for v in verdicts if v.valid is False]
    result.seconds = time.monotonic() - start
    return result


FIRST_BUDGET = 2048
"""Search steps each undecided partition gets in the race's first round; it doubles every round."""


def _race(parts: list[Partition], *, deadline: float | None, fast: bool, explain: bool,
          all_violations: bool, guided: bool = True) -> list[PartitionVerdict]:
    """Check partitions in one process, racing them for the first violation.

    Fast-path and trivial verdicts come first. The undecided partitions then take turns with a step
    budget that doubles each round, so an easy violation is found without finishing a hard partition
    first (Porcupine races goroutines to the same end). The total work is at most about twice that
    of checking every partition in full.
    """
    checks = [PartitionCheck(p, fast=fast, guided=guided) for p in parts]
    stop = not all_violations and any(c.valid is False for c in checks)
    budget = FIRST_BUDGET
    active = [c for c in checks if c.valid is None]
    while active and not stop:
        if deadline is not None and time.monotonic() > deadline:
            break
        for c in active:
            if c.advance(budget, deadline) is False and not all_violations:
                stop = True
                break
        active = [c for c in active if c.valid is None]
        budget *= 2
    verdicts = []
    for c in checks:
        if c.valid is None and not stop:
            c.verdict.valid = "unknown"
        if c.valid is None:
            continue
        if explain:
            c.explain(deadline)
        verdicts.append(c.verdict)
    return verdicts


def _parallel(parts: list[Partition], options: dict[str, Any], workers: int,
              all_violations: bool) -> list[PartitionVerdict]:
    """Check partitions in forked workers, biggest first; stop them all at the first violation."""
    import multiprocessing

    global _PARTS, _OPTIONS
    _PARTS, _OPTIONS = parts, options
    order = sorted(range(len(parts)), key=lambda i: -len(parts[i].calls))
    verdicts: list[PartitionVerdict] = []
    ctx = multiprocessing.get_context("fork")
    pool = ctx.Pool(workers)
    try:
        chunk = max(1, len(order) // (workers * 8))
        for v in pool.imap_unordered(_check_index, order, chunksize=chunk):
            verdicts.append(v)
            if v.valid is False and not all_violations:
                break
    finally:
        pool.terminate()
        pool.join()
        _PARTS, _OPTIONS = [], {}
    return verdicts
