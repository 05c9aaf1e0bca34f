from __future__ import annotations

import pytest

from harness.schedule import nemesis_schedule

TARGETS = {"kill": ["one", "minority", "leader"], "partition": ["halves", "ring"], "pause": ["one"]}


def test_same_seed_same_schedule_and_different_seed_differs() -> None:
    a = nemesis_schedule(42, TARGETS, 120, 5)
    assert a == nemesis_schedule(42, dict(reversed(list(TARGETS.items()))), 120, 5)
    assert a != nemesis_schedule(43, TARGETS, 120, 5)


def test_windows_do_not_overlap_and_close_before_the_limit() -> None:
    for seed in range(20):
        sched = nemesis_schedule(seed, TARGETS, 60, 4)
        assert sched, seed
        end = 0.0
        for w in sched:
            assert w.at >= end and w.duration > 0
            end = w.at + w.duration
            assert w.spec.target in TARGETS[w.spec.package]
        assert end < 60


def test_every_package_gets_used_over_a_long_run() -> None:
    sched = nemesis_schedule(7, TARGETS, 600, 3)
    assert {w.spec.package for w in sched} == set(TARGETS)


def test_no_packages_means_no_faults() -> None:
    assert nemesis_schedule(1, {}, 60, 5) == []


def test_extra_targets_narrow_a_package_and_bad_ones_are_refused() -> None:
    from harness import registry
    from harness.config import TestConfig
    from harness.lifecycle import schedule_for

    packages = {"partition": registry.load_nemesis("partition"), "kill": registry.load_nemesis("kill")}
    config = TestConfig(nemesis=["partition", "kill"], time_limit=60, nemesis_interval=2, seed=3,
                        extra={"targets": {"partition": ["leader-alone"]}})
    faults = schedule_for(config, packages)
    assert {f.spec.target for f in faults if f.spec.package == "partition"} == {"leader-alone"}
    assert len({f.spec.target for f in faults if f.spec.package == "kill"}) > 1
    config.extra = {"targets": {"partition": ["everywhere"]}}
    with pytest.raises(ValueError, match="everywhere"):
        schedule_for(config, packages)
