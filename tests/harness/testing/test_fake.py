"""The fake system on the memory backend: the runtime, workers, nemesis runner and checkers end to end, fast."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

import pytest

from harness.config import TestConfig
from harness.protocols import FaultSpec, Invocation
from harness.registry import load_nemesis
from harness.testing import FakeStore, FakeSystem, MemoryBackend, NodeStates, run_fake
from harness.testing.fake import LOST_EVERY, STALE_LAG, Unavailable


def config(**fields: object) -> TestConfig:
    base: dict[str, object] = {"workload": "register", "time_limit": 2.0, "rate": 0.0, "concurrency": 6,
                               "recovery": 0.0, "nemesis_interval": 0.5, "seed": 3}
    return TestConfig(**{**base, **fields})  # type: ignore[arg-type]


def test_the_correct_store_is_valid_under_kills_and_partitions(tmp_path: Path) -> None:
    outcome = run_fake(config(nemesis=["kill", "partition"]), tmp_path)
    assert outcome.valid is True, outcome.results
    assert outcome.ok_ops > 500
    ops = [json.loads(line) for line in outcome.run.history_path.read_text().splitlines()]
    applied = [op for op in ops if op["process"] == "nemesis" and op["type"] == "info" and not op.get("error")]
    assert {op["f"] for op in applied} >= {"start-kill", "stop-kill", "start-partition", "stop-partition"}
    assert any(op["type"] == "fail" and "down" in str(op.get("error")) for op in ops)  # the kills bit
    assert json.loads((outcome.run.path / "faults.json").read_text())["kill"]["color"].startswith("#")


@pytest.mark.parametrize("bug", ["lost-write", "stale-read"])
def test_each_misbehaviour_is_caught_by_the_linearizability_checker(tmp_path: Path, bug: str) -> None:
    outcome = run_fake(config(bug=[bug]), tmp_path)
    assert outcome.valid is False
    assert outcome.results["checkers"]["linearizable"]["valid"] is False
    assert outcome.results["detection"]["checkers"] == ["linearizable"]


def test_the_set_workload_runs_and_final_reads_see_every_add(tmp_path: Path) -> None:
    outcome = run_fake(config(workload="set", nemesis=["pause"]), tmp_path)
    result = outcome.results["checkers"]["set"]
    assert outcome.valid is True, result
    assert result["counts"]["lost"] == 0 and result["counts"]["ok"] > 100


def test_store_rules() -> None:
    states = NodeStates()
    store = FakeStore(["n1", "n2", "n3"], states, frozenset({"stale-read"}))
    for v in range(STALE_LAG + 2):
        store.write("n1", "k", v)
    assert store.read("n1", "k") == STALE_LAG + 1 and store.read("n2", "k") == 1  # a backup lags
    states.cut = {frozenset(("n3", "n1"))}
    with pytest.raises(Unavailable, match="cannot reach the primary"):
        store.read("n3", "k")
    states.down = {"n1"}
    assert store.read("n2", "k") == STALE_LAG + 1 and store.primary == "n2"  # the next live node took over
    lossy = FakeStore(["n1"], NodeStates(), frozenset({"lost-write"}))
    for v in range(LOST_EVERY):
        lossy.write("n1", "k", v)
    assert lossy.read("n1", "k") == LOST_EVERY - 2  # the last write was acknowledged and lost


def test_faults_act_on_the_memory_backends_states(tmp_path: Path) -> None:
    async def scenario() -> None:
        from harness.cluster import Cluster

        cluster = Cluster(config(nodes=3), FakeSystem(), MemoryBackend())
        await cluster.start(tmp_path)
        backend = cluster.backend
        assert isinstance(backend, MemoryBackend)
        kill = load_nemesis("kill")
        done = await kill.start(cluster, FaultSpec("kill", "leader"), random.Random(1))
        assert done["killed"] == ["n1"] and backend.states.down == {"n1"}  # the primary, via primaries
        await kill.stop(cluster)
        assert not backend.states.down and backend.states.starts == {"n1": 1}
        part = load_nemesis("partition")
        await part.start(cluster, FaultSpec("partition", "halves"), random.Random(1))
        assert frozenset(("n1", "n2")) in backend.states.cut
        await cluster.heal_everything({"partition": part})
        assert not backend.states.cut
        client = cluster.system.client(type("W", (), {"name": "register"})(), cluster)
        await client.open(cluster)
        assert (await client.invoke(Invocation("write", 1, 5))).type == "ok"
        assert (await client.invoke(Invocation("read", 1))).value == 5
        await cluster.stop()
        assert backend.torn_down and backend.states.down == {"n1", "n2", "n3"}

    asyncio.run(scenario())
