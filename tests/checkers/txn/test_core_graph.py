"""The graph: real-time order through barriers is exactly "completed before invoked" in O(n) edges; process
order chains each process; cycles are classified as Elle does; a spent budget never gives a wrong valid."""

from __future__ import annotations

import random

import numpy as np
import pytest
from scipy.sparse.csgraph import breadth_first_order

from checkers.txn import check_txn
from checkers.txn.cycles import Step, classify
from checkers.txn.graph import build, csr
from checkers.txn.inference import PROCESS, REALTIME, RW, RW_REALTIME, WR, WW, EdgeBuffer
from checkers.txn.txns import OK, collect
from tests.checkers.txn.core_history import history, overlapping, txn


def _random_history(n: int, seed: int) -> list:
    rng = random.Random(seed)
    txns = []
    for i in range(n):
        start = rng.uniform(0, 50)
        end = start + rng.uniform(0.1, 10) if rng.random() > 0.1 else None
        t = txn(i, [["append", 1, i]], "ok" if end is not None else "never", start, end)
        txns.append(t)
    return history(txns)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_barrier_paths_are_exactly_completed_before_invoked(seed: int) -> None:
    table = collect(_random_history(40, seed))
    g = build(table, EdgeBuffer(), 0, "realtime")
    m = csr(g.n_nodes, g.src, g.dst)
    for a in range(table.n):
        reach = set(breadth_first_order(m, a, directed=True, return_predecessors=False).tolist())
        for b in range(table.n):
            if a == b:
                continue
            want = table.kind[a] == OK and table.complete_time[a] < table.invoke_time[b]
            assert (b in reach) == bool(want), (a, b)


def test_real_time_order_takes_linear_edges() -> None:
    for n in (100, 1000):
        g = build(collect(_random_history(n, 7)), EdgeBuffer(), 0, "realtime")
        assert len(g.src) <= 3 * n and g.n_nodes <= 2 * n


def test_process_order_chains_consecutive_transactions_of_a_process() -> None:
    ops = history([txn(0, [["r", 1, []]], start=1, end=2), txn(1, [["r", 1, []]], start=1.5, end=2.5),
                   txn(0, [["r", 1, []]], "fail", start=3, end=4), txn(0, [["r", 1, []]], start=5, end=6)])
    g = build(collect(ops), EdgeBuffer(), 0, "process")
    assert sorted(zip(g.src.tolist(), g.dst.tolist(), strict=True)) == [(0, 3)]  # the failed one is no node
    assert set(g.etype.tolist()) == {PROCESS}


@pytest.mark.parametrize(("types", "want"), [
    ([WW, WW], "G0"), ([WW, WR], "G1c"), ([WR, RW], "G-single"), ([RW, WR, RW, WR], "G-nonadjacent"),
    ([RW, RW], "G2-item"), ([RW, RW, WR], "G2-item"), ([WW, REALTIME], "G0-realtime"),
    ([RW, PROCESS], "G-single-process"), ([RW_REALTIME, WR], "G-single-realtime"),
    ([RW, WR, RW, PROCESS], "G-nonadjacent-process"),
])
def test_a_cycle_is_classified_by_its_edges(types: list[int], want: str) -> None:
    n = len(types)
    steps = [Step(i, t, 0, (i + 1) % n) for i, t in enumerate(types)]
    assert classify(steps) == want


def test_a_spent_budget_still_reports_what_it_proves() -> None:
    ops = overlapping(txn(0, [["append", 1, 1], ["append", 2, 1]]), txn(1, [["r", 1, []], ["r", 2, [1]]]),
                      txn(2, [["r", 1, [1]]]))
    result = check_txn(ops, "list-append", ["serializable"], cycle_budget_s=0)
    assert result["valid"] is False and result["anomaly_types"] == ["G-single"]
    ok = overlapping(txn(0, [["append", 1, 1]]), txn(1, [["r", 1, [1]]]))
    assert check_txn(ok, "list-append", ["serializable"], cycle_budget_s=0)["valid"] is True


def test_many_small_components_are_each_reported() -> None:
    txns = []
    for i in range(30):  # 30 independent write skews on keys of their own
        x, y = 2 * i + 1, 2 * i + 2
        txns += [txn(3 * i, [["r", x, []], ["r", y, []], ["append", x, 1]]),
                 txn(3 * i + 1, [["r", x, []], ["r", y, []], ["append", y, 1]]),
                 txn(3 * i + 2, [["r", x, [1]], ["r", y, [1]]])]
    result = check_txn(overlapping(*txns), "list-append", ["serializable"], cap=5)
    assert result["counts"]["G2-item"] == 30 and len(result["anomalies"]["G2-item"]) == 5
    assert result["graph"]["components"] == 30
    assert np.all(np.array([len(e["cycle"]) for e in result["anomalies"]["G2-item"]]) == 2)


def test_rw_edge_types_are_all_named_rw() -> None:
    from checkers.txn.inference import EDGE_NAMES

    assert EDGE_NAMES[RW] == EDGE_NAMES[RW_REALTIME] == "rw"
