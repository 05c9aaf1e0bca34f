"""etcd, the first system nobody here wrote, under faults: clean runs are valid on both backends, and each
known-unsafe mode's recipe shows its anomaly. ``fencepost matrix --system etcd --seeds 10`` runs these over
ten seeds; here, one seed each with short time limits."""

from __future__ import annotations

import shutil
from collections.abc import Callable

import pytest
from fencepost_etcd.recipes import BUGS

from harness.backends import docker_objects as objs
from harness.backends.iptables import why_unavailable
from harness.history.formats import load_history
from harness.launch import RunOutcome

pytestmark = [pytest.mark.campaign, pytest.mark.slow,
              pytest.mark.skipif(shutil.which("etcd") is None, reason="etcd is not installed")]


def faults(*names: str) -> list[str]:
    return [n for n in names if n != "partition" or why_unavailable() is None]


@pytest.mark.parametrize("nemesis", [["partition", "kill", "pause"], ["wipe", "membership"], ["lose-unsynced"]],
                         ids=lambda n: "+".join(n))
def test_clean_etcd_is_valid(run_test: Callable[..., RunOutcome], nemesis: list[str]) -> None:
    outcome = run_test(system="etcd", workload="register", nemesis=faults(*nemesis), time_limit=20,
                       nemesis_interval=3, seed=1)
    if outcome.valid is not True and nemesis == ["lose-unsynced"]:
        # etcd's known behaviour, a real finding kept visible, not hidden: a power loss that tears an unsynced
        # write of a member's WAL leaves a record whose CRC fails, and etcd 3.4 then refuses to start
        # ("walpb: crc mismatch"; etcd-io/etcd#11220, #16596). The member stays down, and the recovery checker
        # reports the final reads of the clients bound to it. Only that outcome is accepted here.
        assert _failed_checkers(outcome) == {"recovery"}, f"see {outcome.report or outcome.run.path}"
        assert _members_down_on_a_torn_wal(outcome), f"see {outcome.report or outcome.run.path}"
    else:
        assert outcome.valid is True, f"see {outcome.report or outcome.run.path}"
    assert outcome.ok_ops >= 1000


def _failed_checkers(outcome: RunOutcome) -> set[str]:
    return {name for name, r in outcome.results["checkers"].items()
            if isinstance(r, dict) and r.get("valid") is False}


def _members_down_on_a_torn_wal(outcome: RunOutcome) -> list[str]:
    """The members whose WAL the nemesis tore and whose log then says ``walpb: crc mismatch``."""
    torn = {node for op in load_history(outcome.run.history_path)
            if op.process == "nemesis" and op.f == "start-lose-unsynced" and isinstance(op.value, dict)
            for node, lost in (op.value.get("lost") or {}).items()
            if "/member/wal/" in str((lost.get("torn") or {}).get("file", ""))}
    return [n for n in sorted(torn)
            if "walpb: crc mismatch" in (outcome.run.path / "nodes" / n / f"{n}.log").read_text(errors="replace")]


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_each_known_unsafe_mode_shows_its_anomaly(run_test: Callable[..., RunOutcome], bug: str) -> None:
    recipe = BUGS[bug].recipe
    if "partition" in recipe.nemesis and why_unavailable() is not None:
        pytest.skip(f"{bug}'s recipe needs partitions: {why_unavailable()}")
    fields = {**recipe.config_fields(), "time_limit": 30}
    extra = fields.pop("extra")
    for seed in (1, 2):  # the anomaly rests on timing a loaded machine can shift: a second seed if the first misses
        outcome = run_test(system="etcd", **fields, seed=seed, bug=[bug], extra=extra)
        if outcome.valid is not True:
            break
    assert outcome.valid is False, f"{bug} showed no anomaly at seeds 1-2: see {outcome.report or outcome.run.path}"
    # the checker that names the anomaly first, then any other that may also see it (the lock's lost add)
    first, *also = {"register": ["linearizable"], "set": ["set"], "lock": ["mutual-exclusion", "set"]}[recipe.workload]
    checkers = outcome.results["detection"]["checkers"]
    assert first in checkers and set(checkers) <= {first, *also}, checkers


DOCKER = objs.engine_unavailable()


@pytest.mark.docker
@pytest.mark.skipif(DOCKER is not None, reason=f"docker tests need a Docker engine: {DOCKER}")
def test_clean_etcd_in_containers_is_valid_and_leaves_nothing(run_test: Callable[..., RunOutcome]) -> None:
    outcome = run_test(system="etcd", backend="docker", workload="register", nemesis=["partition", "kill", "pause"],
                       time_limit=20, nemesis_interval=3, seed=2)
    assert outcome.valid is True, f"see {outcome.report or outcome.run.path}"
    run_id = (outcome.run.path / "cleanup.json").read_text()
    assert objs.leftovers(run_id.split('"')[3]) == {"containers": [], "networks": [], "volumes": []}
