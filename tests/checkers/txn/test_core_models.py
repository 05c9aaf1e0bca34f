"""The consistency-model table: stronger models prohibit everything weaker ones do, and the levels the issue
names prohibit what Adya and Elle say they do."""

from __future__ import annotations

import pytest

from checkers.txn import CONSISTENCY_MODELS, UnknownModel
from checkers.txn.checker import parse_models
from checkers.txn.models import (
    ANOMALY_TYPES,
    STRONGER,
    canonical,
    graph_needs,
    implied_models,
    prohibited_by,
    ruled_out,
    weakest,
)


@pytest.mark.parametrize("model", sorted(STRONGER))
def test_a_stronger_model_prohibits_everything_a_weaker_one_does(model: str) -> None:
    mine = prohibited_by([model])
    for weaker in implied_models([model]):
        assert prohibited_by([weaker]) <= mine, weaker


@pytest.mark.parametrize(("model", "prohibits", "allows"), [
    ("read-uncommitted", {"G0", "duplicate-elements", "garbage-read"}, {"G1a", "G1b", "G1c", "G2-item"}),
    ("read-committed", {"G0", "G1a", "G1b", "G1c"}, {"G-single", "G2-item", "lost-update", "internal"}),
    ("repeatable-read", {"G1a", "G1c", "G2-item", "G-single", "lost-update"}, {"G0-realtime", "G1c-process"}),
    ("snapshot-isolation", {"G1a", "G-single", "G-nonadjacent", "lost-update", "internal"},
     {"G2-item", "G-single-realtime", "G-single-process"}),
    ("serializable", {"G2-item", "G-single", "G1c", "internal"}, {"G-single-realtime", "G2-item-process"}),
    ("strong-session-serializable", {"G2-item-process", "G-single-process", "G2-item"}, {"G-single-realtime"}),
    ("strict-serializable", {"G2-item-realtime", "G-single-realtime", "G0-realtime", "G2-item-process", "G2-item"},
     set()),
    ("strong-snapshot-isolation", {"G-single-realtime", "G-nonadjacent-realtime"}, {"G2-item", "G2-item-realtime"}),
])
def test_each_level_prohibits_what_it_should(model: str, prohibits: set[str], allows: set[str]) -> None:
    got = prohibited_by([model])
    assert prohibits <= got
    assert not (allows & got)


def test_adya_repeatable_read_is_not_snapshot_isolation() -> None:
    assert "G2-item" in prohibited_by(["repeatable-read"]) and "G2-item" not in prohibited_by(["snapshot-isolation"])
    assert "G-nonadjacent" in prohibited_by(["snapshot-isolation"])


def test_names_and_aliases() -> None:
    assert canonical("strong-serializable") == "strict-serializable"
    assert canonical("PL-2.99") == "repeatable-read"
    assert parse_models(["serializable,snapshot-isolation", "serializable"]) == ["serializable", "snapshot-isolation"]
    assert parse_models(None) == ["strict-serializable"]
    assert {"read-committed", "strong-session-snapshot-isolation", "strong-serializable"} <= set(CONSISTENCY_MODELS)
    with pytest.raises(UnknownModel, match="'read-skew'"):
        canonical("read-skew")


def test_what_an_anomaly_rules_out() -> None:
    assert weakest(ruled_out(["G2-item"])) == ["repeatable-read"]
    assert "snapshot-isolation" not in ruled_out(["G2-item"])
    assert weakest(ruled_out(["G0"])) == ["read-uncommitted"]
    assert weakest(ruled_out(["G-single-realtime"])) == ["strong-snapshot-isolation"]
    assert ruled_out([]) == set()


def test_which_order_edges_a_model_needs() -> None:
    assert graph_needs(["serializable"]) == ""
    assert graph_needs(["strong-session-snapshot-isolation"]) == "process"
    assert graph_needs(["serializable", "strict-serializable"]) == "realtime"


def test_strict_serializable_prohibits_every_anomaly_reported() -> None:
    assert set(ANOMALY_TYPES) <= prohibited_by(["strict-serializable"])
