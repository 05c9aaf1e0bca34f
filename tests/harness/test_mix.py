"""The default campaign's schedule (harness.mix) and its run through the runtime with the fake system."""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from harness import registry
from harness.cluster_view import ClusterView
from harness.config import TestConfig
from harness.history.faults import fault_windows
from harness.history.op import NEMESIS, Op, OpType
from harness.history.pairing import pair_calls
from harness.launch import prepare, run_test
from harness.lifecycle import schedule_for
from harness.mix import AIMED_WEIGHT, TRIGGER_SHARE, default_campaign, mixed_schedule, package_weight, window_shares
from harness.protocols import FaultSpec, Nemesis
from harness.testing import FakeSystem, MemoryBackend
from harness.transitions import GENERIC


def reference_packages() -> dict[str, object]:
    system = registry.load_system("reference")
    return {n: registry.load_nemesis(n, system) for n in registry.nemesis_names(system)}


def test_the_schedule_comes_from_the_seed_alone() -> None:
    packages = reference_packages()
    a = mixed_schedule(5, packages, 60, 3, triggers=GENERIC)  # type: ignore[arg-type]
    assert a == mixed_schedule(5, dict(reversed(list(packages.items()))), 60, 3, triggers=GENERIC)  # type: ignore[arg-type]
    assert a != mixed_schedule(6, packages, 60, 3, triggers=GENERIC)  # type: ignore[arg-type]


def test_lanes_overlap_but_a_package_is_never_in_two_windows_and_all_close_in_time() -> None:
    packages = reference_packages()
    overlapping = 0
    for seed in range(30):
        windows = mixed_schedule(seed, packages, 60, 3)  # type: ignore[arg-type]
        assert windows and all(w.at + w.duration < 60 for w in windows)
        assert {w.lane for w in windows} == {0, 1}
        for i, a in enumerate(windows):
            for b in windows[i + 1:]:
                meet = a.at < b.at + b.duration and b.at < a.at + a.duration
                overlapping += meet
                assert not (meet and a.spec.package == b.spec.package), (seed, a, b)
                assert not (meet and a.lane == b.lane), (seed, a, b)
    assert overlapping > 30


def test_targets_that_matter_and_aimed_packages_come_up_more() -> None:
    packages = reference_packages()
    windows = [w for seed in range(1000) for w in mixed_schedule(seed, packages, 120, 3)]  # type: ignore[arg-type]
    kill = Counter(w.spec.target for w in windows if w.spec.package == "kill")
    assert kill["leader"] > 2 * kill["one"] and kill["all"] > kill["minority"]
    assert kill["leader+control"] > 0, "the mix offers process faults the leader with its control plane"
    by_package = Counter(w.spec.package for w in windows)
    blunt = (by_package["kill"] + by_package["pause"]) / 2
    aimed = (by_package["failover"] + by_package["copy-failover"]) / 2
    assert aimed > 1.3 * blunt, (aimed, blunt, AIMED_WEIGHT)


def test_each_package_gets_its_share_without_the_gaps_of_chance() -> None:
    packages = reference_packages()
    weights = {n: package_weight(n, p) for n, p in packages.items()}  # type: ignore[arg-type]
    for seed in range(1, 101):
        short = Counter(w.spec.package for w in mixed_schedule(seed, packages, 60, 3, triggers=GENERIC))  # type: ignore[arg-type]
        assert {n for n, w in weights.items() if w >= 2} <= set(short), (seed, short)
        full = Counter(w.spec.package for w in mixed_schedule(seed, packages, 120, 3, triggers=GENERIC))  # type: ignore[arg-type]
        assert set(full) == set(packages), (seed, sorted(set(packages) - set(full)))
        assert all(full[n] >= 2 for n, w in weights.items() if w >= 2), (seed, full)


def test_a_share_of_windows_waits_for_a_transition_and_none_without_triggers() -> None:
    packages = reference_packages()
    windows = [w for seed in range(100) for w in mixed_schedule(seed, packages, 60, 3, triggers=["election"])]  # type: ignore[arg-type]
    share = sum(w.trigger is not None for w in windows) / len(windows)
    assert abs(share - TRIGGER_SHARE) < 0.08
    assert {w.trigger for w in windows} == {None, "election"}
    assert all(w.trigger is None for w in mixed_schedule(1, packages, 60, 3))  # type: ignore[arg-type]


def test_the_default_campaign_is_every_fault_the_run_can_do() -> None:
    config = default_campaign(TestConfig(system="etcd", workload="register", time_limit=30))
    assert "clock" not in config.nemesis, "etcd refuses clock faults, so its default campaign has none"
    assert {"kill", "pause", "partition", "membership"} <= set(config.nemesis)
    prepare(config)  # nothing in it is refused
    ref = default_campaign(TestConfig(system="reference", workload="register", time_limit=30))
    assert ref.nodes == 4 and ref.extra["mix"] == "default" and "copy" in ref.extra["triggers"]
    assert set(ref.nemesis) == set(registry.nemesis_names(registry.load_system("reference")))
    kept = default_campaign(TestConfig(system="reference", workload="register", nodes=5), frozenset({"nodes"}))
    assert kept.nodes == 5, "a setting given on the command line wins over the system's"


class SlowFault:
    """A fault whose start and stop take a while, as a real partition or restart does: actions of two
    lanes then meet."""

    color = "#888888"
    needs: frozenset[str] = frozenset()

    def __init__(self, name: str) -> None:
        self.name = name

    def targets(self) -> Sequence[str]:
        """One target."""
        return ("default",)

    async def start(self, cluster: ClusterView, spec: FaultSpec, rng: random.Random) -> dict[str, Any]:
        """Take half a second."""
        await asyncio.sleep(0.5)
        return {"slow": True}

    async def stop(self, cluster: ClusterView) -> dict[str, Any]:
        """Take a quarter second."""
        await asyncio.sleep(0.25)
        return {}

    async def heal(self, cluster: ClusterView) -> None:
        """Nothing is left in force."""


class SlowFaultsSystem(FakeSystem):
    """The fake system with two slow faults of its own."""

    def faults(self) -> Mapping[str, Callable[[], Nemesis]]:
        """slow-a and slow-b."""
        return {"slow-a": lambda: SlowFault("slow-a"), "slow-b": lambda: SlowFault("slow-b")}


def test_a_default_campaign_runs_overlapping_faults_into_a_well_formed_history(tmp_path: Path) -> None:
    system, backend = SlowFaultsSystem(), MemoryBackend()
    config = default_campaign(TestConfig(workload="register", time_limit=12, nodes=3, seed=3, concurrency=4,
                                         nemesis_interval=1.0), frozenset({"nodes", "nemesis_interval", "concurrency"}),
                              system=system, backend=backend)
    assert config.nemesis == ["kill", "partition", "pause", "slow-a", "slow-b"]
    outcome = run_test(config, tmp_path, prepared=prepare(config, system=system, backend=backend))
    assert outcome.results["valid"] is True
    history = outcome.run.read_history()
    nemesis = [op for op in history if op.process == NEMESIS]
    acting: dict[str, Op] = {}  # actions in progress at once, by function
    met = 0
    for op in nemesis:
        if op.type is OpType.INVOKE:
            met += bool(acting)
            acting[op.f] = op
        else:
            assert acting.pop(op.f).f == op.f
    assert met, "two lanes' actions were under way at once"
    # The nemesis's calls pair by function, so each start's completion is its own.
    calls = [c for c in pair_calls(history, include_nemesis=True) if c.process == NEMESIS]
    assert calls and all(c.complete is not None and c.complete.f == c.f for c in calls)
    windows = fault_windows(history)
    assert any(a.fault != b.fault and a.start < b.end and b.start < a.end
               for i, a in enumerate(windows) for b in windows[i + 1:]), "lanes overlap"
    planned = json.loads((outcome.run.path / "schedule.json").read_text())
    assert {w.get("lane", 0) for w in planned} == {0, 1}
    html = (outcome.run.path / "report.html").read_text()
    assert 'id="faults"' in html and f"planned {len(planned)} windows in 2 lanes" in html
    # The classics: planned in schedule.json, named in the history's starts, listed in the report.
    classic_windows = [w for w in planned if "classic" in w]
    assert classic_windows and all("trigger" not in w for w in classic_windows)
    starts = [op for op in nemesis if op.type is OpType.INVOKE and op.f.startswith("start-")
              and isinstance(op.value, dict) and "classic" in op.value]
    assert {op.value["classic"] for op in starts} <= {w["classic"] for w in classic_windows} and starts
    assert 'id="classics"' in html and 'data-status="ran"' in html
    assert 'data-classic="clock-jump" data-status="not offered"' in html, "the fake system has no clock"


def test_the_shares_are_how_often_each_package_comes_up_over_many_seeds() -> None:
    # Long runs: a 60 s one has not dealt the weight-1 packages their first turn yet.
    config = default_campaign(TestConfig(system="reference", workload="register", time_limit=600.0))
    packages = prepare(config).packages
    by_package: Counter[str] = Counter()
    for seed in range(1, 31):
        config.seed = seed
        by_package.update(w.spec.package for w in schedule_for(config, packages))
    share: dict[str, float] = {}
    for (package, _), s in window_shares(packages).items():
        share[package] = share.get(package, 0.0) + s
    windows = sum(by_package.values())
    for package, s in share.items():
        # Shares assume every package free; one already open in the other lane cannot be drawn again.
        assert by_package[package] / windows == pytest.approx(s, rel=0.2, abs=0.003), package


def test_whether_a_package_is_generic_is_its_own_attribute_not_its_name() -> None:
    class Novel:
        name, color = "novel-crash", "#000"
        needs: frozenset[str] = frozenset()
        generic = True

    class Aimed:
        name, color = "kill", "#000"  # a generic package's name, but not generic
        needs: frozenset[str] = frozenset()

    assert package_weight("novel-crash", Novel()) == 1.0  # type: ignore[arg-type]
    assert package_weight("kill", Aimed()) == AIMED_WEIGHT  # type: ignore[arg-type]
    for name in ("kill", "pause", "partition", "clock", "lose-unsynced", "wipe", "membership"):
        assert getattr(registry.load_nemesis(name), "generic", False) is True, name


def test_the_leader_with_the_control_plane_is_offered_only_to_a_system_that_declares_one() -> None:
    reference, etcd = registry.load_system("reference"), registry.load_system("etcd")
    for name in ("kill", "pause"):
        assert "leader+control" in registry.load_nemesis(name, reference).mix_targets  # type: ignore[attr-defined]
        assert "leader+control" not in registry.load_nemesis(name, etcd).mix_targets  # type: ignore[attr-defined]
    config = default_campaign(TestConfig(system="etcd", time_limit=120, seed=3))
    targets = {f.spec.target for f in schedule_for(config, prepare(config).packages)}
    assert "leader+control" not in targets and "leader" in targets
