"""A transactional check's result dict, assembled from what the inference and the cycle search found.

Both engines build it here, the local one (:func:`checkers.txn.check_txn`) and Spark's
(:mod:`checkers.spark.txn`), so their results are the same by construction: the anomaly entries with their
witness plans (:func:`anomaly_entries`), and the verdict with the models it rules out (:func:`assemble`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from checkers.txn import models
from checkers.txn.cycles import Found
from checkers.txn.explain import case_entry, cycle_entry
from checkers.txn.graph import Graph
from checkers.txn.inference import Inference
from checkers.txn.txns import FAIL, INFO, OK, TxnTable


def hashable(x: Any) -> Any:
    """``x`` itself if it can key a dict, else its repr (a list key from a JSON history)."""
    try:
        hash(x)
    except TypeError:
        return repr(x)
    return x


def plan(table: TxnTable, tids: list[int], keys: list[Any] | None) -> dict[str, Any]:
    """A witness plan: the transactions (ids and op indices) and the keys a witness file keeps."""
    txns = []
    for t in sorted(set(tids)):
        done = table.complete_op(t)
        txns.append({"id": t, "invoke_index": table.invoke_op(t).index,
                     "complete_index": done.index if done is not None else None})
    return {"txns": txns, "keys": keys}


def witness_txns(table: TxnTable, inference: Inference, keys: list[Any], found: Found) -> dict[str, Any]:
    """What a cycle's witness holds: its transactions, those its edges need, and the keys of its edges."""
    tids: list[int] = []
    kids: list[int] = []
    for step in found.steps:
        tids.append(step.src)
        if step.key >= 0:
            kids.append(step.key)
            tids.extend(inference.support(table, step.src, step.dst, step.etype, step.key))
    return plan(table, tids, [keys[k] for k in dict.fromkeys(kids)])


def anomaly_entries(table: TxnTable, inference: Inference, data: Any, cycles: Sequence[Found],
                    source: str | None) -> dict[str, list[dict[str, Any]]]:
    """Each anomaly explained, with its witness plan, by type: the cycles first, then the other cases.

    Args:
        data: the inference's output (its ``keys`` and ``cases``).
    """
    anomalies: dict[str, list[dict[str, Any]]] = {}
    for found in cycles:
        entry = cycle_entry(table, inference, data.keys, found, source)
        entry["witness"] = witness_txns(table, inference, data.keys, found)
        anomalies.setdefault(found.type, []).append(entry)
    key_ids: dict[Any, int] | None = None
    for case in data.cases.cases:
        entry = case_entry(table, case, source)
        if key_ids is None:
            key_ids = {hashable(k): i for i, k in enumerate(data.keys)}
        kid = key_ids.get(hashable(case.data.get("key")), -1)
        extra = case.support + (inference.key_support(kid) if kid >= 0 else [])
        entry["witness"] = plan(table, [*case.txns, *extra], [case.data["key"]] if kid >= 0 else None)
        anomalies.setdefault(case.type, []).append(entry)
    return anomalies


def kind_counts(table: TxnTable) -> dict[int, int]:
    """How many transactions ended ok, fail and info (by their kind codes)."""
    return {kind: int((table.kind == kind).sum()) for kind in (OK, FAIL, INFO)}


def assemble(workload: str, checked: list[str], n: int, kinds: Mapping[int, int], counts: Mapping[str, int],
             anomalies: dict[str, list[dict[str, Any]]], incomplete: set[str], graph: Graph, n_components: int,
             order: str, start: float | None = None) -> dict[str, Any]:
    """The verdict and the result dict (docs/transactions.md): invalid iff a checked model prohibits an anomaly
    found; unknown when nothing prohibited was found but nothing committed, or the cycle search ran out of time
    before it could rule a prohibited class out.

    Args:
        n: transactions in the history; ``kinds``: how many ended ok, fail and info, by kind code.
        counts: every anomaly type found, with its count; ``anomalies``: those explained.
        incomplete: the cycle classes the search could not finish.
        start: the check's ``time.perf_counter()`` at its start, for ``seconds`` (left out when None).
    """
    prohibited = models.prohibited_by(checked)
    found_types = set(counts)
    bad = sorted(found_types & prohibited)
    ruled = models.ruled_out(found_types)
    weakest = models.weakest(ruled)
    n_ok = kinds.get(OK, 0)
    reasons = []
    if not bad:
        if n_ok == 0:
            reasons.append("no transaction committed, so nothing could be checked")
        missed = sorted(incomplete & prohibited)
        if missed:
            reasons.append(f"the cycle search ran out of time before it could rule out {', '.join(missed)}")
    valid: bool | str = False if bad else ("unknown" if reasons else True)
    result: dict[str, Any] = {
        "valid": valid, "workload": workload, "consistency": checked, "txns": n, "ok": n_ok,
        "fail": kinds.get(FAIL, 0), "info": kinds.get(INFO, 0), "anomaly_types": sorted(found_types),
        "prohibited": bad, "also_seen": sorted(found_types - prohibited), "not": weakest,
        "also_not": sorted(ruled - set(weakest)), "counts": dict(sorted(counts.items())),
        "anomalies": {k: anomalies[k] for k in sorted(anomalies)},
        "graph": {"nodes": graph.n_nodes, "edges": len(graph.src), "order": order or "none",
                  "components": n_components},
    }
    if start is not None:
        result["seconds"] = round(time.perf_counter() - start, 3)
    if reasons:
        result["unknown_reasons"] = reasons
    return result
