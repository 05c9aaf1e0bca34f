"""The clock fault: its plans, and on a real local cluster, nodes whose clocks it moves and puts back."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
from pathlib import Path

import pytest

from harness.backends import faketime
from harness.backends.docker import DockerBackend
from harness.backends.iptables import why_unavailable
from harness.backends.local import LocalBackend
from harness.capabilities import CLOCK, CapabilityMissing
from harness.cluster_view import ClusterView
from harness.config import TestConfig
from harness.launch import run_test
from harness.protocols import FaultSpec, Nemesis
from harness.registry import load_nemesis, needs_of
from nemesis.clock import MAX_BUMP_S, MAX_SKEW_S, TARGETS, ClockNemesis, plan, strobe
from system.client import Client
from tests.harness.backends.local_cluster import local_cluster

NODES = ["n1", "n2", "n3"]
HAVE_FAKETIME = faketime.why_unavailable() is None


@pytest.mark.parametrize("target", TARGETS)
def test_same_rng_same_plan(target: str) -> None:
    assert plan(target, NODES, random.Random(3)) == plan(target, NODES, random.Random(3))


def test_plans_stay_within_their_bounds() -> None:
    for seed in range(50):
        rng = random.Random(seed)
        (node, offset), = plan("bump", NODES, rng)["offsets"].items()
        assert node in NODES and 1.0 <= abs(offset) <= MAX_BUMP_S
        skew = plan("skew", NODES, rng)["offsets"]
        assert sorted(skew) == NODES and all(abs(o) <= MAX_SKEW_S for o in skew.values())
        s = plan("strobe", NODES, rng)
        assert s["node"] in NODES and abs(s["delta"]) >= 0.2 and 0.01 <= s["period"] <= 0.2
    with pytest.raises(ValueError, match="unknown target"):
        plan("melt", NODES, random.Random(1))


def test_the_package_is_found_and_needs_the_clock_capability() -> None:
    pkg = load_nemesis("clock")
    assert isinstance(pkg, Nemesis) and pkg.name == "clock"
    assert CLOCK in needs_of([pkg, load_nemesis("kill")])
    assert CLOCK not in needs_of([load_nemesis("kill"), load_nemesis("partition")])


class Clocks:
    """A stand-in cluster holding offsets, for the strobe's bookkeeping (no processes involved)."""

    def __init__(self) -> None:
        self.offsets: dict[str, float] = {}
        self.writes = 0
        self.clock = self

    def nodes(self) -> list[str]:
        return NODES

    async def set_offset(self, node: str, offset: float) -> None:
        self.offsets[node] = offset
        self.writes += 1


def test_strobe_is_bounded_and_stop_cancels_it_and_resets() -> None:
    async def scenario() -> None:
        clocks = Clocks()
        assert await strobe(clocks, "n1", 2.0, 0.01, limit_s=0.05) == 5  # type: ignore[arg-type]
        assert clocks.offsets["n1"] == 0.0
        nem = ClockNemesis()
        await nem.start(clocks, FaultSpec("clock", "strobe"), random.Random(2))  # type: ignore[arg-type]
        await asyncio.sleep(0.3)
        flips = clocks.writes
        assert flips > 2
        assert (await nem.stop(clocks))["reset"]  # type: ignore[arg-type]
        assert set(clocks.offsets.values()) == {0.0}
        await asyncio.sleep(0.3)
        assert clocks.writes == flips + 2  # the strobe's own reset and stop's; nothing after
        await nem.heal(clocks)  # type: ignore[arg-type]
        assert set(clocks.offsets) == set(NODES) and set(clocks.offsets.values()) == {0.0}

    asyncio.run(scenario())


def commit_stamps(cluster: ClusterView, node: str) -> list[float]:
    """The wall-clock stamps the node put on its commit events, oldest first."""
    events = Path(str(cluster.specs[node].data_dir)) / "events.jsonl"
    records = [json.loads(line) for line in events.read_text().splitlines() if line.strip()]
    return [float(r["ts"]) for r in records if r.get("event") == "commit"]


async def node_clock_offset(backend: ClusterView, client: Client, node: str, key: str) -> float:
    """Write, then read how far the node's stamp on the new commit is from our clock (every node holds
    every tablet, so every node logs the commit)."""
    seen = len(commit_stamps(backend, node))
    before = time.time()
    assert (await client.put(key, before)).type == "ok"
    deadline = time.monotonic() + 15
    while len(stamps := commit_stamps(backend, node)) == seen:
        assert time.monotonic() < deadline, f"{node} logged no new commit"
        await asyncio.sleep(0.1)
    return stamps[-1] - before


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_FAKETIME, reason=faketime.MISSING)
def test_a_bump_moves_one_nodes_clock_and_stop_and_heal_put_it_back(tmp_path: Path) -> None:
    async def scenario() -> None:
        nem = ClockNemesis()
        async with local_cluster(tmp_path, 5.0, needs=frozenset({CLOCK})) as (backend, client):
            try:
                assert abs(await node_clock_offset(backend, client, "n1", "k0")) < 2.0
                desc = await nem.start(backend, FaultSpec("clock", "bump"), random.Random(7))
                (node, offset), = desc["offsets"].items()
                assert faketime.read_offset(faketime.clock_file(tmp_path / "cluster", node)) == offset
                assert await node_clock_offset(backend, client, node, "k1") == pytest.approx(offset, abs=2.0)
                assert await nem.stop(backend) == {"reset": [node]}
                assert abs(await node_clock_offset(backend, client, node, "k2")) < 2.0
                await nem.start(backend, FaultSpec("clock", "skew"), random.Random(8))
                await nem.start(backend, FaultSpec("clock", "strobe"), random.Random(9))
                for i in range(20):  # the cluster serves through skew and strobe
                    assert (await client.put(f"s{i}", i)).type == "ok"
                await nem.heal(backend)
                for n in backend.nodes():
                    assert faketime.read_offset(faketime.clock_file(tmp_path / "cluster", n)) == 0.0
            finally:
                with contextlib.suppress(Exception):
                    await nem.heal(backend)

    asyncio.run(scenario())


def test_clock_faults_are_refused_on_nodes_started_without_faketime() -> None:
    with pytest.raises(CapabilityMissing, match="libfaketime"):
        asyncio.run(LocalBackend().set_offset("n1", 5.0))


def test_the_docker_backend_refuses_clock_faults_before_starting_anything(tmp_path: Path) -> None:
    from fencepost_reference.plugin import ReferencePlugin

    backend = DockerBackend()
    assert CLOCK not in backend.capabilities
    assert "clock faults need the local backend" in str(backend.unavailable(CLOCK))
    with pytest.raises(CapabilityMissing, match=r"clock faults need the local backend"):
        asyncio.run(backend.setup(TestConfig(nemesis=["clock"], backend="docker"), ReferencePlugin(), tmp_path,
                                  frozenset({CLOCK})))
    assert not backend.containers and not (tmp_path / "cleanup.json").exists()
    with pytest.raises(CapabilityMissing, match=r"clock faults need the local backend"):
        asyncio.run(backend.set_offset("n1", 1.0))


CAMPAIGNS = [["clock"], ["clock", "kill", "partition"]]


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_FAKETIME, reason=faketime.MISSING)
@pytest.mark.parametrize("nemesis", CAMPAIGNS, ids=["+".join(n) for n in CAMPAIGNS])
def test_clock_campaigns_on_the_correct_system_are_valid(tmp_path: Path, nemesis: list[str]) -> None:
    if "partition" in nemesis and why_unavailable() is not None:
        pytest.skip(f"partition: {why_unavailable()}")
    # Seed 8 draws bump, strobe, strobe, bump, skew alone; with kill and partition: kill one, strobe, kill
    # the leader, bump, partition halves.
    config = TestConfig(workload="register", nemesis=nemesis, time_limit=20, nemesis_interval=2, seed=8,
                        concurrency=8, recovery=3)
    outcome = run_test(config, tmp_path / "store")
    ops = [json.loads(line) for line in outcome.run.history_path.read_text().splitlines() if line.strip()]
    moved = [op for op in ops if op.get("f") == "start-clock" and op.get("type") == "info" and not op.get("error")]
    assert moved, "the schedule never moved a clock"
    assert outcome.valid is True, f"see {outcome.report or outcome.run.path}"
    assert outcome.ok_ops >= 100
    clocks = outcome.run.path / "cluster" / "clock"
    assert {faketime.read_offset(p) for p in clocks.iterdir()} == {0.0}  # healed
