"""The same campaign and checkers on both backends, and the same nemesis schedule for the same seed.

``pytest -m campaign`` runs the local half with the rest of the campaign; the docker half needs an
engine (``-m docker``) and skips with the reason when none answers.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from harness.backends import docker_objects as objs
from harness.backends.iptables import why_unavailable
from harness.history.formats import load_history
from harness.launch import RunOutcome

DOCKER_REASON = objs.engine_unavailable()
DOCKER = pytest.param("docker", marks=[pytest.mark.docker, pytest.mark.skipif(
    DOCKER_REASON is not None, reason=f"docker tests need a Docker engine: {DOCKER_REASON}")])
ALL_FAULTS = ["partition", "kill", "pause", "wipe"]


def local_partitions_or_skip(backend: str) -> None:
    if backend == "local" and why_unavailable() is not None:
        pytest.skip(f"partition on the local backend: {why_unavailable()}")


@pytest.mark.campaign
@pytest.mark.parametrize("backend", ["local", DOCKER])
def test_register_stays_linearizable_under_every_fault(run_test: Callable[..., RunOutcome], backend: str) -> None:
    local_partitions_or_skip(backend)
    outcome = run_test(workload="register", nemesis=ALL_FAULTS, time_limit=15, nemesis_interval=2, seed=11,
                       concurrency=8, recovery=3, backend=backend)
    where = outcome.report or outcome.run.path
    assert outcome.valid is True, f"{outcome.results['valid']}: see {where}"
    assert outcome.ok_ops >= 200, f"only {outcome.ok_ops} ok ops: see {where}"
    if backend == "docker":
        run_id = json.loads((outcome.run.path / "cleanup.json").read_text())["docker_run"]
        assert objs.leftovers(run_id) == {"containers": [], "networks": [], "volumes": []}


def nemesis_actions(outcome: RunOutcome) -> list[tuple[str, Any]]:
    """The nemesis's recorded actions: each start's function and resolved targets (not UUIDs), in order;
    a start cut short by the end of the run (completed with an error) did not finish and is left out."""
    ops = load_history(outcome.run.history_path)
    return [(str(op.f), {k: v for k, v in op.value.items() if "uuid" not in k})  # UUIDs are random per run
            for op in ops if op.process == "nemesis" and op.type.value == "info" and str(op.f).startswith("start-")
            and op.error is None]


@pytest.mark.campaign
@pytest.mark.docker
@pytest.mark.skipif(DOCKER_REASON is not None, reason=f"docker tests need a Docker engine: {DOCKER_REASON}")
def test_same_seed_same_nemesis_schedule_on_both_backends(run_test: Callable[..., RunOutcome]) -> None:
    faults = ["kill", "pause", "wipe"] + (["partition"] if why_unavailable() is None else [])
    runs = {b: run_test(workload="register", nemesis=faults, time_limit=10, nemesis_interval=1, seed=29,
                        concurrency=4, recovery=1, backend=b) for b in ("local", "docker")}
    schedules = {b: json.loads((o.run.path / "schedule.json").read_text()) for b, o in runs.items()}
    assert schedules["local"] == schedules["docker"]
    actions = {b: nemesis_actions(o) for b, o in runs.items()}
    # Every window that starts well before the time limit runs on both; targets drawn from the window's
    # seed resolve to the same nodes ("leader" depends on the running system, so only its kind is compared).
    due = [w for w in schedules["local"] if w["at"] < 10 - 2]
    assert len(due) >= 2, schedules["local"]
    # A wipe waits for the damage guard's turn (up to WIPE_WAIT_S) and holds its lane meanwhile, so the
    # windows after one may not be reached in 10 s; those that ran on both backends are compared in order.
    for b in runs:
        assert len(actions[b]) >= 2, f"{b} ran {actions[b]}"
    compared = 0
    for window, local, docker in zip(due, actions["local"], actions["docker"], strict=False):
        assert local[0] == docker[0] == f"start-{window['package']}"
        assert local[1]["target"] == docker[1]["target"] == window["target"]
        if window["target"] == "leader":
            continue
        skipped = ["skipped" in local[1], "skipped" in docker[1]]
        if skipped[0] != skipped[1]:
            continue  # a guard (a wipe waits until the last one is repaired) reads live state, which differs
        # A skip's reason quotes live state (the acting set, mid-repair); the rest must match exactly.
        same = {k: v for k, v in local[1].items() if k != "skipped"}
        assert same == {k: v for k, v in docker[1].items() if k != "skipped"}, \
            f"window {window}: local {local[1]} vs docker {docker[1]}"
        compared += not any(skipped)
    assert compared >= 1, f"no window with a drawn target ran on both backends: {actions}"
