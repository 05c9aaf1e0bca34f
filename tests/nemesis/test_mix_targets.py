"""The targets the default campaign's classics need, offered to the mix only: one follower (kill, pause and
partition) and a majority/minority split (partition); the recipes' target choices stay as they were."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest

from harness import registry
from harness.cluster import running
from harness.config import TestConfig
from harness.targets import FOLLOWER, PROCESS_TARGETS, choose_nodes, follower_of
from harness.testing import FakeSystem, MemoryBackend
from nemesis.partition import MINORITY, TARGETS, grudge_for


def cut_off(grudge: dict[str, list[str]], nodes: list[str]) -> list[frozenset[str]]:
    """The sides of a complete grudge: each node with those it still reaches."""
    return sorted({frozenset(n for n in nodes if n not in grudge.get(me, [])) for me in nodes}, key=len)


@pytest.mark.parametrize("n", [3, 4, 5, 7])
def test_a_follower_cut_is_one_node_that_is_not_the_leader(n: int) -> None:
    nodes = [f"n{i + 1}" for i in range(n)]
    for seed in range(30):
        g = grudge_for(FOLLOWER, nodes, random.Random(seed), leader="n2")
        lone, rest = cut_off(g, nodes)
        assert len(lone) == 1 and "n2" not in lone and len(rest) == n - 1
    assert {follower_of(nodes, None, random.Random(s)) for s in range(60)} == set(nodes), "no leader known: any"


@pytest.mark.parametrize("n", [3, 4, 5, 7])
def test_a_minority_cut_leaves_a_majority_together(n: int) -> None:
    nodes = [f"n{i + 1}" for i in range(n)]
    sides = [cut_off(grudge_for(MINORITY, nodes, random.Random(seed)), nodes) for seed in range(30)]
    for few, many in sides:
        assert 1 <= len(few) < n / 2 < len(many) and len(few) + len(many) == n
    assert len({tuple(sorted(few)) for few, _ in sides}) > 1, "the minority is drawn"


def test_the_mix_offers_them_and_the_recipes_do_not() -> None:
    for name in ("kill", "pause"):
        package = registry.load_nemesis(name)
        assert FOLLOWER in package.mix_targets and tuple(package.targets()) == PROCESS_TARGETS  # type: ignore[attr-defined]
    partition = registry.load_nemesis("partition")
    assert {FOLLOWER, MINORITY} <= set(partition.mix_targets)  # type: ignore[attr-defined]
    assert tuple(partition.targets()) == TARGETS and FOLLOWER not in TARGETS and MINORITY not in TARGETS


def test_kill_and_pause_of_a_follower_never_hit_the_leader(tmp_path: Path) -> None:
    async def scenario() -> None:
        system = FakeSystem()
        async with running(TestConfig(system="fake", nodes=3), system, MemoryBackend(), tmp_path) as cluster:
            leader = (await cluster.primaries())[0]
            hit = [await choose_nodes(cluster, FOLLOWER, random.Random(seed)) for seed in range(20)]
            assert all(len(h) == 1 and h[0] != leader for h in hit), (leader, hit)
            assert {h[0] for h in hit} == set(cluster.nodes()) - {leader}

    asyncio.run(scenario())
