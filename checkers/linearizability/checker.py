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

from checkers.linearizability.components import SplitSearch, components
from checkers.linearizability.memory import format_size, give_back, rss_bytes, share
from checkers.linearizability.search import Search
from checkers.models.base import INFINITY, UNKNOWN, Entry, ModelBase, Partition
from harness.history.op import Call

if TYPE_CHECKING:
    from collections.abc import Callable

    from checkers.linearizability.counterexample import Counterexample
    from checkers.linearizability.witness import Witness

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
        method: ``fast-path``, ``search``, ``split search`` (independent components searched apart,
            :mod:`checkers.linearizability.components`) or ``empty``.
        nodes: search steps tried.
        counterexample: why it is not linearizable, when it is not.
        reason: why the verdict is unknown (the time or memory budget ran out), when it is.
        components: independent components searched apart (1: one search).
        witness: a minimal failing sub-history, when one was asked for.
        seconds: wall time spent deciding it (fast path and search, not the explanation).
    """

    label: Any
    valid: bool | str | None
    ops: int = 0
    pruned: int = 0
    method: str = "search"
    nodes: int = 0
    counterexample: Counterexample | None = None
    reason: str | None = None
    components: int = 1
    witness: Witness | None = None
    seconds: float = 0.0


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
        unknown_keys: labels of partitions that ran out of time or memory.
        unknown_reasons: why each of ``unknown_keys`` is unknown, in the same order.
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
    unknown_reasons: list[str] = field(default_factory=list)
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

    Args:
        part: the calls and the model for them.
        fast: try the model's polynomial fast path first.
        guided: let the model prune dead configurations (:meth:`ModelBase.feasible`).
        split: search the model's independent components apart (:mod:`checkers.linearizability.components`).

    Attributes:
        verdict: the partition's verdict so far (``valid`` is None while undecided).
    """

    def __init__(self, part: Partition, *, fast: bool = True, guided: bool = True, split: bool = True) -> None:
        started = time.monotonic()
        self.guided = guided
        self.part = part
        self.model: ModelBase = part.model  # type: ignore[assignment]
        entries = encode(part.calls, self.model)
        self.init = self.model.init()  # type: ignore[attr-defined]
        self.entries = self.model.prune(entries)
        self.verdict = PartitionVerdict(part.label, None, len(self.entries), len(entries) - len(self.entries))
        self.groups = components(self.entries, self.model) if split else [list(range(len(self.entries)))]
        self.verdict.components = len(self.groups)
        self.search: Search | SplitSearch | None = None
        if not self.entries:
            self.verdict.valid, self.verdict.method = True, "empty"
        elif fast and (quick := self.model.fast_check(self.entries, self.init)) is not None:
            self.verdict.valid, self.verdict.method = quick, "fast-path"
        else:
            self.search = self._new_search()
        self.verdict.seconds = time.monotonic() - started

    def _new_search(self) -> Search | SplitSearch:
        if len(self.groups) > 1:
            self.verdict.method = "split search"
            return SplitSearch(self.entries, self.model, self.init, self.groups, guided=self.guided)
        return Search(self.entries, self.model, self.init, guided=self.guided)

    @property
    def valid(self) -> bool | str | None:
        """True, False, ``"unknown"``, or None while undecided."""
        return self.verdict.valid

    def advance(self, max_nodes: int | None = None, deadline: float | None = None,
                max_rss: int | None = None) -> bool | str | None:
        """Search on within the budget; the verdict, or None if still undecided.

        Past ``deadline``, or with the process holding more than ``max_rss`` bytes, the verdict is
        ``"unknown"`` with the reason, and the search's memo is freed.
        """
        search = self.search
        if self.verdict.valid is not None or search is None:
            return self.verdict.valid
        started = time.monotonic()
        try:
            self.verdict.valid = search.run(max_nodes, deadline, max_rss)
        except MemoryError:
            search.stopped = "MemoryError"
        self.verdict.nodes = search.nodes
        if self.verdict.valid is None and search.stopped is not None:
            self._give_up(search.stopped, max_rss)
        self.verdict.seconds += time.monotonic() - started
        return self.verdict.valid

    def _give_up(self, why: str, max_rss: int | None) -> None:
        """End undecided: unknown, with the reason; free the memo."""
        if why == "time":
            reason = f"time: the budget ran out after {self.verdict.nodes} search steps"
        elif why == "memory":
            reason = (f"memory: the process held {format_size(rss_bytes())}, over the search's bound of "
                      f"{format_size(max_rss or 0)} (--max-memory), after {self.verdict.nodes} search steps")
        else:
            reason = f"memory: {why} after {self.verdict.nodes} search steps"
        self.verdict.valid, self.verdict.reason = "unknown", reason
        self.search = None
        give_back()

    def explain(self, deadline: float | None = None, *, witness: bool = False, max_rss: int | None = None) -> None:
        """Attach a counterexample to an invalid verdict (searching for one if the fast path decided),
        and with ``witness`` a minimal failing sub-history."""
        if self.verdict.valid is not False:
            return
        if self.search is None:
            self.search = self._new_search()
        if self.search.valid is None:
            self.search.run(EXPLAIN_NODES, deadline, max_rss)
        from checkers.linearizability.counterexample import build_counterexample

        entries = self.entries
        best = self.search.best
        if isinstance(self.search, SplitSearch) and self.search.failed is not None:
            group = self.groups[self.search.failed]
            entries = [self.entries[i] for i in group]
            local = {g: k for k, g in enumerate(group)}
            best = [local[i] for i in best]
        self.verdict.counterexample = build_counterexample(self.verdict.label, entries, self.model, self.init, best)
        if witness:
            from checkers.linearizability.witness import find_witness

            self.verdict.witness = find_witness(self.part, entries, self.verdict, max_rss=max_rss)


EXPLAIN_NODES = 2_000_000
"""Search steps spent finding a counterexample for a partition the fast path already failed."""


def check_partition(part: Partition, *, deadline: float | None = None, fast: bool = True,
                    explain: bool = True, guided: bool = True, split: bool = True, max_rss: int | None = None,
                    witness: bool = False) -> PartitionVerdict:
    """Check one partition to the end (or the deadline, or the memory bound); explain a failure.

    Args:
        part: the calls and the model for them.
        deadline: :func:`time.monotonic` instant after which the verdict is unknown.
        fast: try the model's polynomial fast path first.
        guided: let the model prune dead configurations (:meth:`ModelBase.feasible`).
        split: search independent components apart.
        max_rss: bytes the process may hold before the verdict is unknown (None: no bound).
        explain: build a counterexample for an invalid verdict.
        witness: also find a minimal failing sub-history (needs ``explain``).
    """
    pc = PartitionCheck(part, fast=fast, guided=guided, split=split)
    if pc.advance(None, deadline, max_rss) is None:
        pc.verdict.valid = "unknown"
    if explain:
        pc.explain(deadline, witness=witness, max_rss=max_rss)
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
                explain: bool = True, workers: int | None = None, guided: bool = True, split: bool = True,
                max_memory: int | None = None, witness: bool = False,
                on_parts: Callable[[list[Partition]], None] | None = None,
                on_verdict: Callable[[PartitionVerdict], None] | None = None) -> CheckResult:
    """Check a history's calls against ``model``.

    Args:
        calls: the paired calls.
        model: the model (keyed models split per key).
        partition: split into independent partitions; False checks one partition (for benchmarks).
        timeout: seconds before the verdict becomes unknown.
        all_violations: keep checking after the first invalid partition.
        fast: allow polynomial fast paths.
        guided: let the model prune dead configurations (False only to measure what that buys).
        split: search a partition's independent components apart (False only to measure what that buys).
        max_memory: bytes the checking processes may hold in all before a partition's verdict is
            unknown (None: no bound); shared out when partitions are checked in several processes.
        explain: build counterexamples.
        witness: also find a minimal failing sub-history for each invalid partition (needs ``explain``).
        workers: processes to use; None picks by the amount of work.
        on_parts: called with the partitions before any is checked (to estimate the work).
        on_verdict: called with each partition's verdict as soon as it is decided, before any
            explanation is built.
    """
    start = time.monotonic()
    deadline = None if timeout is None else start + timeout
    calls = list(calls)
    parts = model.partition(calls) if partition else [Partition(None, model, calls)]  # type: ignore[arg-type]
    if on_parts is not None:
        on_parts(parts)
    result = CheckResult(True, model.name, len(calls), partitions=len(parts))
    if workers is None:
        workers = min(len(parts), os.cpu_count() or 1) if len(calls) >= PARALLEL_MIN_OPS else 1
    parallel = workers > 1 and len(parts) > 1
    options: dict[str, Any] = {"deadline": deadline, "fast": fast, "explain": explain, "guided": guided,
                               "split": split, "witness": witness,
                               "max_rss": share(max_memory, workers if parallel else 1)}
    if parallel:
        verdicts = _parallel(parts, options, workers, all_violations, on_verdict)
    else:
        verdicts = _race(parts, options, all_violations, on_verdict)
    return fill_result(result, verdicts, start)


def fill_result(result: CheckResult, verdicts: list[PartitionVerdict], start: float) -> CheckResult:
    """Complete ``result`` from the partitions' verdicts (in key order) and the monotonic ``start`` time."""
    result.checked = len(verdicts)
    result.valid = merge([v.valid if v.valid is not None else "unknown" for v in verdicts])
    result.invalid_keys = [v.label for v in verdicts if v.valid is False]
    unknown = [v for v in verdicts if v.valid == "unknown"]
    result.unknown_keys = [v.label for v in unknown]
    result.unknown_reasons = [v.reason or "time: the budget ran out" for v in unknown]
    result.failures = [v for v in verdicts if v.valid is False]
    result.seconds = time.monotonic() - start
    return result


FIRST_BUDGET = 2048
"""Search steps each undecided partition gets in the race's first round; it doubles every round."""


def _race(parts: list[Partition], options: dict[str, Any], all_violations: bool,
          on_verdict: Callable[[PartitionVerdict], None] | None = None) -> list[PartitionVerdict]:
    """Check partitions in one process, racing them for the first violation.

    Fast-path and trivial verdicts come first. The undecided partitions then take turns with a step
    budget that doubles each round, so an easy violation is found without finishing a hard partition
    first (Porcupine races goroutines to the same end). The total work is at most about twice that
    of checking every partition in full.
    """
    deadline, max_rss = options["deadline"], options["max_rss"]
    checks = [PartitionCheck(p, fast=options["fast"], guided=options["guided"], split=options["split"])
              for p in parts]
    if on_verdict is not None:
        for c in checks:
            if c.valid is not None:
                on_verdict(c.verdict)
    stop = not all_violations and any(c.valid is False for c in checks)
    budget = FIRST_BUDGET
    active = [c for c in checks if c.valid is None]
    while active and not stop:
        if deadline is not None and time.monotonic() > deadline:
            break
        for c in active:
            got = c.advance(budget, deadline, max_rss)
            if got is not None and on_verdict is not None:
                on_verdict(c.verdict)
            if got is False and not all_violations:
                stop = True
                break
        active = [c for c in active if c.valid is None]
        budget *= 2
    verdicts = []
    for c in checks:
        if c.valid is None and not stop:
            c.verdict.valid, c.verdict.reason = "unknown", "time: the budget ran out before its turn"
            if on_verdict is not None:
                on_verdict(c.verdict)
        if c.valid is None:
            continue
        if options["explain"]:
            c.explain(deadline, witness=options["witness"], max_rss=max_rss)
        verdicts.append(c.verdict)
    return verdicts


def _parallel(parts: list[Partition], options: dict[str, Any], workers: int, all_violations: bool,
              on_verdict: Callable[[PartitionVerdict], None] | None = None) -> list[PartitionVerdict]:
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
            if on_verdict is not None:
                on_verdict(v)
            if v.valid is False and not all_violations:
                break
    finally:
        pool.terminate()
        pool.join()
        _PARTS, _OPTIONS = [], {}
    return verdicts
