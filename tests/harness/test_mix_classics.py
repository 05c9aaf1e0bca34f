"""The default campaign's classics (harness.classics) and workload shape, on the shipped systems' own declarations.

Every 60 s default campaign plans each classic its run can do; the rest are named with the reason; a short run
says which it left out; the schedule is still a function of the seed; and the workload has its workers per node
and their rate, whatever the system.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from harness import registry
from harness.capabilities import PRIMARIES
from harness.classics import CLASSIC_SHARE, CLASSICS, campaign_targets, from_extra
from harness.config import TestConfig
from harness.launch import prepare
from harness.lifecycle import schedule_for
from harness.mix import default_campaign, package_weight
from harness.protocols import Nemesis
from harness.schedule import ScheduledFault
from harness.workload_shape import RATE_PER_WORKER, WORKERS_PER_NODE

SYSTEMS = ("reference", "etcd")
"""The shipped systems (the toy and the fake are examples and test tools)."""
SEEDS = range(1, 21)


def campaign(system: str, time_limit: float = 60.0) -> tuple[TestConfig, dict[str, Nemesis]]:
    config = default_campaign(TestConfig(system=system, workload="register", time_limit=time_limit))
    return config, prepare(config).packages


def planned(schedule: list[ScheduledFault]) -> dict[str, ScheduledFault]:
    first: dict[str, ScheduledFault] = {}
    for w in schedule:
        if w.classic is not None:
            first.setdefault(w.classic, w)
    return first


@pytest.mark.parametrize("system", SYSTEMS)
def test_a_60_s_default_campaign_plans_every_classic_its_run_can_do(system: str) -> None:
    config, packages = campaign(system)
    record = config.extra["classics"]
    offered = {o.classic for o in from_extra(config.extra)}
    not_offered = {d["classic"]: d["why"] for d in record["not_offered"]}
    assert offered | set(not_offered) == {c.name for c in CLASSICS} and not offered & set(not_offered)
    caps = registry.load_system(system).capabilities
    for c in CLASSICS:  # what the plugin declares decides: a package in the campaign with the target offers it
        doable = c.package in packages and (not c.leader or PRIMARIES in caps) and (
            not c.targets or any(t in campaign_targets(packages[c.package]) for t in c.targets))
        assert (c.name in offered) == doable, (c.name, not_offered.get(c.name))
        assert c.name in offered or not_offered[c.name]
    for seed in SEEDS:
        config.seed = seed
        schedule = schedule_for(config, packages)
        first = planned(schedule)
        assert set(first) == offered, (seed, sorted(offered - set(first)))
        for c in CLASSICS:
            if c.name in first:
                w = first[c.name]
                assert w.spec.package == c.package and w.trigger is None
                assert w.spec.target in (c.targets or campaign_targets(packages[c.package]))
        assert sum(w.classic is not None for w in schedule) <= CLASSIC_SHARE * len(schedule) + 1


def test_what_each_system_cannot_do_is_named_with_its_reason() -> None:
    etcd, _ = campaign("etcd")
    why = {d["classic"]: d["why"] for d in etcd.extra["classics"]["not_offered"]}
    assert set(why) == {"clock-jump", "clock-strobe"}
    assert all("clock capability" in w and "vDSO" in w for w in why.values()), why  # etcd's own reason
    reference, _ = campaign("reference")
    assert reference.extra["classics"]["not_offered"] == []


@pytest.mark.parametrize("system", SYSTEMS)
def test_the_schedule_is_a_function_of_the_seed(system: str) -> None:
    config, packages = campaign(system)
    again, again_packages = campaign(system)  # a fresh campaign: its own plugin and package instances
    plans = []
    for seed in SEEDS:
        config.seed = again.seed = seed
        plan = schedule_for(config, packages)
        assert plan == schedule_for(config, dict(reversed(list(packages.items()))))
        assert schedule_for(again, again_packages) == plan, "a fresh campaign at the same seed plans the same"
        plans.append(json.dumps([w.to_dict() for w in plan]))
    assert len(set(plans)) == len(plans), "every seed plans its own schedule"
    assert len({tuple(w["classic"] for w in json.loads(p) if "classic" in w) for p in plans}) > 10, \
        "the classics' order comes from the seed"


def test_the_aimed_packages_share_what_the_classics_leave() -> None:
    config, packages = campaign("reference", 120.0)
    heavy = {n for n, p in packages.items() if package_weight(n, p) >= 2}
    for seed in SEEDS:
        config.seed = seed
        schedule = schedule_for(config, packages)
        dealt = [w.spec.package for w in schedule if w.classic is None]
        assert heavy <= set(dealt), (seed, sorted(heavy - set(dealt)))
        assert {w.spec.package for w in schedule} == set(packages)


def fencepost(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness.cli.main", *args], capture_output=True, text=True,
                          timeout=120, check=False)


def plan_of(*args: str) -> tuple[dict[str, Any], subprocess.CompletedProcess[str]]:
    done = fencepost("test", "--plan", *args)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout.splitlines()[-1])["plan"]), done


def test_a_30_s_plan_lists_the_classics_it_left_out_and_a_60_s_plan_none() -> None:
    short, done = plan_of("--system", "etcd", "--seed", "1", "--time-limit", "30")
    text = done.stdout
    rows = {r["classic"]: r for r in short["classics"]}
    assert [r["classic"] for r in short["classics"]] == [c.name for c in CLASSICS]
    left = [n for n, r in rows.items() if r["status"] == "left out"]
    assert left and all("too short" in rows[n]["why"] for n in left)
    placed = {w["classic"] for w in short["windows"] if "classic" in w}
    assert placed == {n for n, r in rows.items() if r["status"] == "planned"}
    assert {rows[n]["status"] for n in ("clock-jump", "clock-strobe")} == {"not offered"}
    assert "Classics (every default campaign tries these first)" in text
    assert f"{len(placed)} planned, {len(left)} left out" in text
    full, done = plan_of("--system", "etcd", "--seed", "1", "--time-limit", "60")
    assert [r["status"] for r in full["classics"]].count("planned") == 10 and "10 planned, 0 left out" in done.stdout
    workers = WORKERS_PER_NODE * 3  # the workload shape, on the command line's default campaign
    assert f"nodes 3, workers {workers}, rate {RATE_PER_WORKER * workers:g}/s" in done.stderr


def test_a_recipes_plan_has_no_classics() -> None:
    plan, done = plan_of("--system", "etcd", "--bug", "serializable-reads", "--seed", "1")
    assert "classics" not in plan and "Classics" not in done.stdout
    assert all("classic" not in w for w in plan["windows"])


@pytest.mark.parametrize("system", SYSTEMS)
def test_the_default_campaign_has_its_workers_per_node_and_their_rate(system: str) -> None:
    config, _ = campaign(system)
    assert config.concurrency == WORKERS_PER_NODE * config.nodes >= 2 * config.nodes
    assert config.rate == RATE_PER_WORKER * config.concurrency
    given = default_campaign(TestConfig(system=system, concurrency=3, rate=50.0), frozenset({"concurrency", "rate"}))
    assert (given.concurrency, given.rate) == (3, 50.0), "the command line wins"
    workers = default_campaign(TestConfig(system=system, concurrency=7), frozenset({"concurrency"}))
    assert (workers.concurrency, workers.rate) == (7, RATE_PER_WORKER * 7), "the rate follows the workers given"
    five = default_campaign(TestConfig(system=system, nodes=5), frozenset({"nodes"}))
    assert five.concurrency == WORKERS_PER_NODE * 5
