"""Overlapping fault windows' network cuts compose: each window heals only its own cut."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from harness.client_workers import Tally
from harness.cluster import Cluster
from harness.cluster_view import ClusterView
from harness.config import TestConfig
from harness.nemesis_runner import run_schedule
from harness.protocols import FaultSpec
from harness.recorder import Recorder
from harness.schedule import ScheduledFault
from harness.shared_network import SharedNetwork, acting_for, union
from harness.targets import complete_grudge
from harness.testing import FakeSystem, MemoryBackend


def pairs(backend: MemoryBackend) -> set[frozenset[str]]:
    return set(backend.states.cut)


def test_union_cuts_every_link_of_each_grudge_both_ways() -> None:
    got = union([{"n1": ["n2"]}, complete_grudge([["n3"], ["n1", "n2"]])])
    assert got == {"n1": ["n2", "n3"], "n2": ["n1", "n3"], "n3": ["n1", "n2"]}


def test_a_window_heals_only_its_own_cut_and_the_final_heal_clears_all() -> None:
    backend = MemoryBackend()
    net = SharedNetwork(backend)

    async def scenario() -> None:
        with acting_for("a"):
            await net.partition(complete_grudge([["n1"], ["n2", "n3"]]))
        with acting_for("b"):
            await net.partition(complete_grudge([["n4"], ["n5"]]))
        assert pairs(backend) == {frozenset(p) for p in [("n1", "n2"), ("n1", "n3"), ("n4", "n5")]}
        with acting_for("a"):
            await net.heal()
        assert pairs(backend) == {frozenset(("n4", "n5"))}  # b's cut outlives a's heal
        with acting_for("b"):
            await net.partition({"n2": ["n3"]})  # b's new cut replaces b's old one
        assert pairs(backend) == {frozenset(("n2", "n3"))}
        with acting_for("a"):
            await net.partition({"n1": ["n2"]})
        await net.heal()  # for no window: everything
        assert pairs(backend) == set() and net.cuts() == {}

    asyncio.run(scenario())


def test_a_partition_for_no_window_replaces_every_cut() -> None:
    backend = MemoryBackend()
    net = SharedNetwork(backend)

    async def scenario() -> None:
        with acting_for("a"):
            await net.partition({"n1": ["n2"]})
        await net.partition({"n3": ["n4"]})
        assert pairs(backend) == {frozenset(("n3", "n4"))}
        assert list(net.cuts()) == [None]

    asyncio.run(scenario())


class Refusing(MemoryBackend):
    async def partition(self, grudge: Mapping[str, Sequence[str]]) -> None:
        if "n9" in grudge:
            raise OSError("iptables refused")
        await super().partition(grudge)


def test_a_cut_the_backend_refused_is_not_kept() -> None:
    backend = Refusing()
    net = SharedNetwork(backend)

    async def scenario() -> None:
        with acting_for("a"):
            await net.partition({"n1": ["n2"]})
        with acting_for("b"), pytest.raises(OSError):
            await net.partition({"n9": ["n1"]})
        assert list(net.cuts()) == ["a"] and pairs(backend) == {frozenset(("n1", "n2"))}

    asyncio.run(scenario())


class Cut:
    """A fault package that cuts one pair of nodes for its window and notes what was cut when it stopped."""

    color = "#000000"
    needs: frozenset[str] = frozenset()

    def __init__(self, name: str, pair: tuple[str, str], seen: dict[str, set[frozenset[str]]],
                 backend: MemoryBackend) -> None:
        self.name, self.pair, self.seen, self.backend = name, pair, seen, backend

    def targets(self) -> Sequence[str]:
        return ("pair",)

    async def start(self, cluster: ClusterView, spec: FaultSpec, rng: random.Random) -> dict[str, Any]:
        await cluster.network.partition(complete_grudge([[self.pair[0]], [self.pair[1]]]))
        return {}

    async def stop(self, cluster: ClusterView) -> dict[str, Any]:
        self.seen[f"before-stop-{self.name}"] = set(self.backend.states.cut)
        await cluster.network.heal()
        self.seen[f"after-stop-{self.name}"] = set(self.backend.states.cut)
        return {}

    async def heal(self, cluster: ClusterView) -> None:
        await cluster.network.heal()


def test_the_nemesis_runner_keeps_one_lanes_cut_through_the_other_lanes_heal(tmp_path: Path) -> None:
    backend = MemoryBackend()
    cluster = Cluster(TestConfig(nodes=3), FakeSystem(), backend)
    seen: dict[str, set[frozenset[str]]] = {}
    packages = {"early": Cut("early", ("n1", "n2"), seen, backend), "late": Cut("late", ("n2", "n3"), seen, backend)}
    schedule = [ScheduledFault(0.0, 0.2, FaultSpec("early", "pair"), seed=1, lane=0),
                ScheduledFault(0.1, 0.3, FaultSpec("late", "pair"), seed=2, lane=1)]

    async def scenario() -> None:
        await cluster.start(tmp_path)
        recorder = Recorder(tmp_path / "history.jsonl")
        try:
            await run_schedule(schedule, packages, cluster, recorder, time.monotonic(), Tally())
        finally:
            recorder.close()

    asyncio.run(scenario())
    n12, n23 = frozenset(("n1", "n2")), frozenset(("n2", "n3"))
    assert seen["before-stop-early"] == {n12, n23}
    assert seen["after-stop-early"] == {n23}  # the late window's cut held through the early one's heal
    assert seen["after-stop-late"] == set()
