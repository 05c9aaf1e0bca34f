"""check_txn and TxnChecker: a transactional history judged against consistency models.

The verdict is invalid if and only if an anomaly that a checked model prohibits was found; anomalies the models
allow are listed as ``also_seen``. It is ``unknown`` when nothing prohibited was found but no transaction
committed, or a cycle search that could have found a prohibited anomaly ran out of time.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from checkers.txn import models
from checkers.txn.cycles import search
from checkers.txn.graph import build, components
from checkers.txn.inference import Inference
from checkers.txn.list_append import ListAppendInference
from checkers.txn.result import anomaly_entries, assemble, kind_counts
from checkers.txn.txns import collect
from harness.checker_protocol import CheckContext
from harness.history.op import Op

WORKLOADS = ("list-append", "rw-register")
DEFAULT_CONSISTENCY = ("strict-serializable",)


def make_inference(workload: str, order: str) -> Inference:
    """The workload's inference (``order``: what the checked models let rw-register version orders use)."""
    if workload == "list-append":
        return ListAppendInference()
    if workload == "rw-register":
        from checkers.txn.rw_register import RwRegisterInference

        return RwRegisterInference(order)
    raise ValueError(f"unknown transactional workload {workload!r}; expected one of {', '.join(WORKLOADS)}")


def parse_models(consistency: str | Sequence[str] | None) -> list[str]:
    """Model names from a list, or a comma-separated string; each canonical (raises models.UnknownModel)."""
    if consistency is None:
        return list(DEFAULT_CONSISTENCY)
    items = [consistency] if isinstance(consistency, str) else list(consistency)
    names = [part.strip() for item in items for part in str(item).split(",") if part.strip()]
    out: list[str] = []
    for name in names or DEFAULT_CONSISTENCY:
        canonical = models.canonical(name)
        if canonical not in out:
            out.append(canonical)
    return out


@contextmanager
def _gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while millions of small objects are made (they are all kept)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def check_txn(ops: Sequence[Op], workload: str, consistency: Sequence[str] | str = DEFAULT_CONSISTENCY,
              source: str | None = None, *, lines: Sequence[int] | None = None, cycle_budget_s: float = 10.0,
              cap: int = 20) -> dict[str, Any]:
    """Check a transactional history; the result is JSON-ready (see docs/transactions.md).

    Args:
        ops: the history (ops whose ``f`` is not ``txn`` are ignored).
        workload: ``list-append`` or ``rw-register``.
        consistency: the models to check (Elle's names; several may be given).
        source: the history's file name, for ``file:line`` in explanations.
        lines: each op's line in its file, when the ops do not carry ``extra["line"]``.
        cycle_budget_s: seconds the cycle search may take in all.
        cap: anomalies explained per type (all are counted).

    Raises:
        MalformedTxn: a micro-op is malformed (its message is one line; it knows the op's index and line).
        models.UnknownModel: a consistency model name is not known.
    """
    start = time.perf_counter()
    checked = parse_models(consistency)
    order = models.graph_needs(checked)
    inference = make_inference(workload, order)
    with _gc_paused():
        table = collect(ops, lines)
        data = inference.infer(table, order, table.n)
        graph = build(table, data.edges, data.n_virtual, order)
        comps = components(graph)
        classes = [*models.CYCLE_BASES, *(base + "-" + order for base in models.CYCLE_BASES if order)]
        outcome = search(graph, comps, classes, cycle_budget_s, cap)
        anomalies = anomaly_entries(table, inference, data, outcome.cycles, source)
    counts = {**data.cases.counts, **outcome.counts}
    return assemble(workload, checked, table.n, kind_counts(table), counts, anomalies, outcome.incomplete, graph,
                    len(comps.sizes), order, start)


class TxnChecker:
    """The transactional checker as a :class:`harness.checker_protocol.Checker` (name ``txn``).

    Args:
        workload: ``list-append`` or ``rw-register``.
        consistency: the models to check; ``ctx.options["consistency"]`` (a list or a comma-separated string)
            overrides them.
    """

    name = "txn"

    def __init__(self, workload: str = "list-append", consistency: Sequence[str] | str = DEFAULT_CONSISTENCY) -> None:
        if workload not in WORKLOADS:
            raise ValueError(f"unknown transactional workload {workload!r}; expected one of {', '.join(WORKLOADS)}")
        self.workload = workload
        self.consistency = parse_models(consistency)

    def check(self, history: Sequence[Op], ctx: CheckContext) -> dict[str, Any]:
        """Check the run's history; ``source`` is the run's history file when the ops carry its lines."""
        consistency = ctx.options.get("consistency") or self.consistency
        source = None
        if ctx.run_dir is not None and any("line" in op.extra for op in history[:1]):
            source = str(Path(ctx.run_dir) / "history.jsonl")
        return check_txn(history, self.workload, consistency, source)
