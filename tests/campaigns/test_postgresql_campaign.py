"""PostgreSQL under faults: the clean mode is valid under every fault it offers, and repeatable-read's recipe
shows write skew that snapshot isolation allows. ``fencepost matrix --system postgresql --seeds 5`` runs every
mode over five seeds (the nightly workflow); here, one seed each with short time limits."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from checkers.txn.checker import check_txn
from harness.launch import RunOutcome
from tests.plugins.postgresql.kit import WHY_NOT

pytestmark = [pytest.mark.campaign, pytest.mark.slow,
              pytest.mark.skipif(WHY_NOT is not None, reason=f"PostgreSQL: {WHY_NOT}")]


def test_the_clean_mode_is_valid_under_kills_pauses_and_both_partitions(run_test: Callable[..., RunOutcome]) -> None:
    outcome = run_test(system="postgresql", workload="list-append", time_limit=20, nemesis_interval=3, seed=1,
                       nemesis=["kill", "pause", "partition", "client-partition"])
    assert outcome.valid is True, f"see {outcome.report or outcome.run.path}"
    assert outcome.ok_ops >= 300


def test_repeatable_read_is_write_skew_and_valid_as_snapshot_isolation(run_test: Callable[..., RunOutcome]) -> None:
    outcome = run_test(system="postgresql", workload="list-append", bug=["repeatable-read"], nemesis=[],
                       time_limit=15, seed=1, options={"consistency": "serializable"})
    assert outcome.valid is False, f"see {outcome.report or outcome.run.path}"
    history = outcome.run.read_history()
    serializable = check_txn(history, "list-append", ["serializable"])
    assert "G2-item" in serializable["anomalies"], sorted(serializable["anomalies"])
    snapshot = check_txn(history, "list-append", ["snapshot-isolation"])
    assert snapshot["valid"] is True, sorted(snapshot["anomalies"])


@pytest.mark.docker
@pytest.mark.nightly
@pytest.mark.parametrize("bug", [None, "repeatable-read"], ids=["clean", "repeatable-read"])
def test_both_run_on_docker(run_test: Callable[..., RunOutcome], bug: str | None) -> None:
    """The node image gains PostgreSQL; the clean mode stays valid under kills and partitions there, and
    repeatable-read shows write skew (nightly: the first build of the image takes minutes)."""
    from harness.backends import docker_objects as objs

    if (why := objs.engine_unavailable()) is not None:
        pytest.skip(f"docker tests need a Docker engine: {why}")
    outcome = run_test(system="postgresql", workload="list-append", backend="docker", time_limit=15, seed=1,
                       nemesis=["kill", "partition"] if bug is None else [], nemesis_interval=3,
                       bug=[bug] if bug else [], options={"consistency": "serializable"} if bug else {})
    assert outcome.valid is (bug is None), f"see {outcome.report or outcome.run.path}"
    assert outcome.ok_ops >= 100
