"""check_txn against the brute-force oracle, on random small histories (up to 6 transactions over 2 or 3 keys).

What must agree, and why no more:

* **Soundness, always, both workloads, every model.** If check_txn calls a history invalid under a model, the
  oracle finds no execution allowed under it. A model the oracle does not decide itself (read-uncommitted,
  cursor-stability, ...) is judged through every model it does decide that implies it: a history that truly
  violates a model violates each stronger one. The models check_txn rules out in ``not`` are held to the same.
* **Completeness for list-append under serializable, strict-serializable, strong-session-serializable,
  snapshot-isolation and strong-session-snapshot-isolation, when every key's reads fully determine its version
  order.** Then the dependency graph is exact. A history is serializable exactly when it has no G1a, G1b, internal
  inconsistency, incompatible order, duplicate or garbage element, and no cycle (with real-time or process edges
  for the strict and session models); it is snapshot isolation exactly when, besides, no cycle lacks two adjacent
  rw edges (Cerone and Gotsman, "Analysing Snapshot Isolation", 2016: a history is SI iff its dependency graph,
  with session order for the session variant, has no such cycle). So an Elle-class checker must find every
  violation the oracle finds. "Fully determined" here means: on each key, every read of an ``ok`` transaction is a
  prefix of the longest one, which has no duplicate and holds only appended values and every value an ``ok``
  transaction appended, each transaction's appends in the order it made them; an ``info`` transaction's appends
  are all seen or none is (unseen, it may never have committed and drops out).
* **The same for rw-register when reads before writes alone give every version order**: no ``info`` writer, each
  ``ok`` writer of a key read it first and wrote it once, and those reads chain the writes into one line from the
  initial state; every value read was written by someone. The inference rules the issue allows (initial state,
  a write after a read of the key) then prove the whole order.

Where a checker of Elle's class is legitimately incomplete, only soundness is asserted:

* list-append with an append nobody read: its place in the version order is unknown, so the ww and rw edges it
  would give are missing (write skew through two unread appends goes unseen);
* list-append where a transaction's own appends to a key are read in another order than it made them, and the read
  goes on past them (T1 appends 1 then 2; T2 appends 3; a read shows [2 1 3]): no edge joins a transaction to
  itself, so no cycle shows it, and Elle's G1b looks at a read's last element only (a read ending [.. 2 1] is
  G1b, and another writer's append between them makes a G0);
* rw-register: version orders are inferred only from what the history proves (the initial state, a write after a
  read of the same key in one transaction, process or real-time order for the models that allow it); blind writes
  leave orders unknown, so anomalies that need them are missed. Version orders are never guessed. Nor are they
  taken from what later reads saw (a process that wrote 1 and then read 2 knows 1 came first; Elle infers that
  only under its linearizable-keys / sequential-keys options);
* snapshot isolation with partial version orders: the oracle searches start and commit points, a checker finds
  G1, internal and G-nonadjacent cycles in the edges it can prove, so it misses what needs unproven edges.
  strong-snapshot-isolation is held to soundness only: the characterization above is stated for session order,
  not real time;
* read-committed and weaker: the oracle decides PL-2 with its per-read prefixes, and read-uncommitted only through
  the models that imply it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checkers.txn import CONSISTENCY_MODELS, check_txn
from tests.checkers.txn.oracle import MODELS, HistoryOracle, Txn, stronger_or_equal
from tests.checkers.txn.oracle_strategies import Drawn, histories

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FEWER = settings(SETTINGS, max_examples=120)
MAIN_MODELS = (
    "read-uncommitted", "read-committed", "repeatable-read", "snapshot-isolation",
    "strong-session-snapshot-isolation", "strong-snapshot-isolation", "serializable",
    "strong-session-serializable", "strict-serializable",
)
COMPLETE_MODELS = (
    "serializable", "strict-serializable", "strong-session-serializable", "snapshot-isolation",
    "strong-session-snapshot-isolation",
)


def _judges(model: str) -> list[str]:
    """The oracle's models that imply ``model``: each must rule a history out when ``model`` is violated."""
    return sorted(stronger_or_equal(model) & MODELS.keys())


def _describe(drawn: Drawn, result: dict[str, Any] | None = None) -> str:
    lines = [f"{drawn.workload}, reads {drawn.read_mode}, perturbed {drawn.perturbed}, leaked {drawn.leaked}"]
    lines += [f"  {t}" for t in drawn.txns]
    if result is not None:
        lines.append(f"  checker: valid={result['valid']} prohibited={result.get('prohibited')} "
                     f"types={result.get('anomaly_types')}")
    return "\n".join(lines)


def _assert_sound(drawn: Drawn, oracle: HistoryOracle, models: Iterable[str]) -> None:
    for model in models:
        result = check_txn(list(drawn.ops), drawn.workload, [model])
        assert result["valid"] in (True, False, "unknown")
        if result["valid"] is False:
            allowing = [m for m in _judges(model) if oracle.allowed(m)]
            assert not allowing, (
                f"check_txn calls it invalid under {model}, but the oracle allows it under {allowing}: "
                f"{oracle.witness(allowing[0])}\n{_describe(drawn, result)}"
            )


def _assert_not_is_sound(drawn: Drawn, oracle: HistoryOracle) -> None:
    everything = sorted(CONSISTENCY_MODELS)
    result = check_txn(list(drawn.ops), drawn.workload, everything)
    for model in result.get("not", []):
        allowing = [m for m in _judges(model) if oracle.allowed(m)]
        assert not allowing, (
            f"check_txn rules out {model}, but the oracle allows it under {allowing}\n{_describe(drawn, result)}"
        )


def fully_determined(txns: list[Txn]) -> bool:
    """True when every key's reads fully determine its version order (see the module's docstring)."""
    keys = {k for t in txns for _, k, _ in t.ops}
    seen_values: dict[Any, set[Any]] = {}
    for k in keys:
        reads = [tuple(v or ()) for t in txns if t.outcome == "ok" for f, key, v in t.ops if f == "r" and key == k]
        longest = max(reads, key=len, default=())
        if any(r != longest[: len(r)] for r in reads) or len(set(longest)) != len(longest):
            return False
        appended = {v for t in txns for f, key, v in t.ops if f == "append" and key == k}
        if not set(longest) <= appended:
            return False
        ok_appends = {v for t in txns if t.outcome == "ok" for f, key, v in t.ops if f == "append" and key == k}
        if not ok_appends <= set(longest):
            return False
        for t in txns:
            places = [longest.index(v) for f, key, v in t.ops if f == "append" and key == k and v in longest]
            if places != sorted(places):
                return False
        seen_values[k] = set(longest)
    for t in txns:
        if t.outcome == "info":
            seen = [v in seen_values[k] for f, k, v in t.ops if f == "append"]
            if any(seen) and not all(seen):
                return False
    return True


def register_fully_determined(txns: list[Txn]) -> bool:
    """rw-register: True when every key's version order follows from reads before writes alone.

    On each key: no ``info`` transaction writes it; each ``ok`` writer writes it once, after reading it; those reads
    chain the writes into one line from the initial state (no two writers read the same version); and every value
    an ``ok`` transaction reads was written by someone.
    """
    keys = {k for t in txns for _, k, _ in t.ops}
    for k in keys:
        if any(t.outcome == "info" and any(f == "w" and key == k for f, key, _ in t.ops) for t in txns):
            return False
        written = {v for t in txns for f, key, v in t.ops if f == "w" and key == k}
        successor: dict[Any, Any] = {}
        for t in txns:
            mine = [(f, v) for f, key, v in t.ops if key == k]
            writes = [v for f, v in mine if f == "w"]
            if t.outcome != "ok":
                continue
            if any(f == "r" and v is not None and v not in written for f, v in mine):
                return False
            if not writes:
                continue
            if len(writes) != 1 or mine[0][0] != "r" or mine[0][1] in successor:
                return False
            successor[mine[0][1]] = writes[0]
        version, chained = None, 0
        while version in successor:
            version = successor[version]
            chained += 1
        if chained != len(successor):
            return False
    return True


def _assert_complete(drawn: Drawn, oracle: HistoryOracle) -> None:
    determined = fully_determined if drawn.workload == "list-append" else register_fully_determined
    if not determined(oracle.txns):
        return
    for model in COMPLETE_MODELS:
        if not oracle.allowed(model):
            result = check_txn(list(drawn.ops), drawn.workload, [model])
            assert result["valid"] is False, (
                f"the oracle finds no {model} execution, and every version order is known, but check_txn says "
                f"{result['valid']}\n{_describe(drawn, result)}"
            )


def test_the_models_the_oracle_judges_are_the_checkers() -> None:
    """Every main model is one check_txn knows, and the oracle can judge it (directly or through stronger ones)."""
    assert set(MAIN_MODELS) <= set(CONSISTENCY_MODELS)
    assert all(_judges(m) for m in MAIN_MODELS)


@SETTINGS
@given(histories("list-append"), st.sampled_from(MAIN_MODELS))
def test_list_append_invalid_means_not_allowed(drawn: Drawn, model: str) -> None:
    """Checked under one model drawn per history, and under all of them at once (its ``not``)."""
    oracle = HistoryOracle(drawn.ops, drawn.workload)
    _assert_sound(drawn, oracle, [model])
    _assert_not_is_sound(drawn, oracle)


@SETTINGS
@given(histories("rw-register"), st.sampled_from(MAIN_MODELS))
def test_rw_register_invalid_means_not_allowed(drawn: Drawn, model: str) -> None:
    """Checked under one model drawn per history, and under all of them at once (its ``not``)."""
    oracle = HistoryOracle(drawn.ops, drawn.workload)
    _assert_sound(drawn, oracle, [model])
    _assert_not_is_sound(drawn, oracle)


@FEWER
@given(histories("list-append", final_read=True))
def test_list_append_fully_determined_not_allowed_means_invalid(drawn: Drawn) -> None:
    oracle = HistoryOracle(drawn.ops, drawn.workload)
    _assert_complete(drawn, oracle)


@FEWER
@given(histories("rw-register", final_read=True, shapes=("update",)))
def test_rw_register_fully_determined_not_allowed_means_invalid(drawn: Drawn) -> None:
    """Registers whose every write follows a read of the same key: the version order is known, as list-append's."""
    oracle = HistoryOracle(drawn.ops, drawn.workload)
    _assert_complete(drawn, oracle)


@FEWER
@given(
    histories("list-append", final_read=True, shapes=("rmw",), read_modes=("si", "snapshot")),
    st.sampled_from(("snapshot-isolation", "strong-snapshot-isolation", "repeatable-read")),
)
def test_snapshot_shaped_histories_agree_both_ways_where_they_must(drawn: Drawn, model: str) -> None:
    """Write-skew-prone histories (reads, then a write; snapshot reads): soundness under the SI family and
    repeatable-read, and completeness under the serializable models when fully determined."""
    oracle = HistoryOracle(drawn.ops, drawn.workload)
    _assert_sound(drawn, oracle, [model])
    _assert_complete(drawn, oracle)
