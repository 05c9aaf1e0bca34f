"""The oracle checked against itself and against executions whose model is known by construction.

The oracle is the ground truth of the agreement tests, so it gets tests of its own that need no checker:

* on each textbook history (textbook.py), its verdict under every model it decides is the textbook's;
* a history whose reads come unchanged from a serial execution is serializable; from a serial execution in
  completion order, strict-serializable; from snapshots that obey first-committer-wins, snapshot-isolation; from an
  execution whose reads each see some earlier prefix, read-committed;
* whatever a history is, a model's verdict implies the verdicts of every model it implies
  (strict-serializable allowed => serializable allowed => snapshot-isolation allowed => read-committed allowed...);
* a witness the oracle gives is a real one: replaying it gives the observed reads.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from tests.checkers.txn.oracle import IMPLIES, MODELS, HistoryOracle
from tests.checkers.txn.oracle_histories import build
from tests.checkers.txn.oracle_strategies import Drawn, histories
from tests.checkers.txn.textbook import CASES, Case

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
BUILT_FROM = {
    "serial": "serializable",
    "serial-by-completion": "strict-serializable",
    "si": "snapshot-isolation",
    "per-read": "read-committed",
}


def _by_construction(drawn: Drawn) -> None:
    oracle = HistoryOracle(drawn.ops, drawn.workload)
    if drawn.clean and drawn.read_mode in BUILT_FROM:
        assert oracle.allowed(BUILT_FROM[drawn.read_mode]), drawn.txns
    for strong, weaker in IMPLIES.items():
        if strong in MODELS and oracle.allowed(strong):
            for weak in weaker:
                if weak in MODELS:
                    assert oracle.allowed(weak), (strong, weak, drawn.txns)


@SETTINGS
@given(histories("list-append"))
def test_list_append_executions_are_allowed_and_models_nest(drawn: Drawn) -> None:
    _by_construction(drawn)


@SETTINGS
@given(histories("rw-register"))
def test_rw_register_executions_are_allowed_and_models_nest(drawn: Drawn) -> None:
    _by_construction(drawn)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.workload}:{c.name}")
def test_the_oracle_gives_the_textbook_verdicts(case: Case) -> None:
    oracle = HistoryOracle(build(case.txns), case.workload)
    assert {m for m in MODELS if oracle.allowed(m)} == case.ok_under


def test_a_witness_replays_to_the_observed_reads() -> None:
    """The serializable witness of each textbook history that has one is an order that gives exactly its reads."""
    checked = 0
    for case in CASES:
        oracle = HistoryOracle(build(case.txns), case.workload)
        witness = oracle.witness("serializable")
        if witness is None:
            continue
        state: dict[object, list[object] | object] = {}
        for tid in witness.order:
            txn = oracle.txns[tid]
            for f, k, v in txn.ops:
                if f == "append":
                    state[k] = [*state.get(k, []), v]  # type: ignore[misc]
                elif f == "w":
                    state[k] = v
                elif txn.outcome == "ok":
                    empty: list[object] | None = [] if case.workload == "list-append" else None
                    assert state.get(k, empty) == (v if v is not None or empty is None else []), (case.name, tid)
        assert {t.id for t in oracle.txns if t.outcome == "ok"} <= set(witness.order)
        checked += 1
    assert checked >= 10
