from __future__ import annotations

import asyncio
import random

import pytest

from harness.capabilities import PRIMARIES
from harness.registry import Refused, load_nemesis, nemesis_names
from nemesis import partition
from nemesis.partition import DEPOSED, TARGETS, grudge_for

NODES = ["n1", "n2", "n3", "n4", "n5"]


def reachable(grudge: dict[str, list[str]], a: str, b: str) -> bool:
    return b not in grudge.get(a, []) and a not in grudge.get(b, [])


def test_halves_cut_every_cross_link_and_no_inner_link() -> None:
    g = grudge_for("halves", NODES, random.Random(1))
    left, right = ["n1", "n2"], ["n3", "n4", "n5"]
    assert all(not reachable(g, a, b) for a in left for b in right)
    assert all(reachable(g, a, b) for side in (left, right) for a in side for b in side)


def test_isolating_the_leader() -> None:
    g = grudge_for("leader", NODES, random.Random(1), leader="n4")
    assert sorted(g["n4"]) == ["n1", "n2", "n3", "n5"]
    assert all(reachable(g, a, b) for a in NODES for b in NODES if "n4" not in (a, b))


def test_majorities_ring_every_node_sees_a_distinct_majority() -> None:
    g = grudge_for("majorities-ring", NODES, random.Random(3))
    views = [frozenset(n for n in NODES if n == me or reachable(g, me, n)) for me in NODES]
    assert all(len(v) >= 3 for v in views)
    assert len(set(views)) == len(NODES)


def test_bridge_has_one_node_seeing_both_sides() -> None:
    g = grudge_for("bridge", NODES, random.Random(9))
    bridges = [n for n in NODES if all(reachable(g, n, m) for m in NODES if m != n)]
    assert len(bridges) == 1
    others = [n for n in NODES if n not in bridges]
    assert any(not reachable(g, a, b) for a in others for b in others)


@pytest.mark.parametrize("target", TARGETS)
def test_same_rng_same_grudge(target: str) -> None:
    assert grudge_for(target, NODES, random.Random(4), "n2") == grudge_for(target, NODES, random.Random(4), "n2")


def test_registry_finds_each_package_by_its_entry_point() -> None:
    assert {"kill", "pause", "partition", "clock", "lose-unsynced", "membership"} <= set(nemesis_names())
    assert load_nemesis("kill").name == "kill"
    with pytest.raises(Refused, match="unknown nemesis"):
        load_nemesis("meteor")


def test_leader_alone_cuts_the_leader_from_nodes_and_operators_only() -> None:
    g = grudge_for("leader-alone", NODES, random.Random(1), "n2", ["op1", "op2"])
    assert sorted(g["n2"]) == sorted([n for n in NODES if n != "n2"] + ["op1", "op2"])
    assert g["op1"] == ["n2"] and all(g[n] == ["n2"] for n in NODES if n != "n2")


def test_leader_deposed_cuts_like_leader_alone() -> None:
    ops = ["op1", "op2"]
    assert grudge_for(DEPOSED, NODES, random.Random(1), "n2", ops) == grudge_for("leader-alone", NODES,
                                                                                 random.Random(1), "n2", ops)


class Answers:
    """What the system names as primaries, one answer per poll (the last one repeats): the two calls
    :func:`deposed` and :func:`busiest_leader` make of a cluster."""

    def __init__(self, *answers: list[str]) -> None:
        self.answers = list(answers)

    def has(self, capability: str) -> bool:
        return capability == PRIMARIES

    async def primaries(self) -> list[str]:
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]

    def nodes(self) -> list[str]:
        return ["n1", "n2", "n3"]


def test_no_primaries_named_is_not_a_deposed_leader(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(partition, "POLL_S", 0.01)
    cluster = Answers(["n1"], [], [], ["n2", "n1"], ["n2"])
    after = asyncio.run(partition.deposed(cluster, "n1", 5.0))  # type: ignore[arg-type]
    assert after is not None and cluster.answers == [["n2"]]
    assert asyncio.run(partition.deposed(Answers([]), "n1", 0.1)) is None  # type: ignore[arg-type]


def test_a_deposed_window_with_no_leader_known_skips_instead_of_cutting_a_random_node(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(partition, "POLL_S", 0.01)
    monkeypatch.setattr(partition, "LEADER_WAIT_S", 0.1)
    done = asyncio.run(partition.package()._depose(Answers([]), random.Random(1)))  # type: ignore[arg-type]
    assert done == {"target": DEPOSED, "skipped": "no leader known within 0.1 s"}
