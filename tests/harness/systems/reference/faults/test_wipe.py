"""The wipe fault on a real local cluster: it wipes a node only while every tablet is whole."""

from __future__ import annotations

import asyncio
import random
import time
from pathlib import Path

import pytest

from harness.cluster import Cluster
from harness.protocols import FaultSpec
from harness.systems.reference.faults.wipe import unrepaired
from harness.systems.reference.master import master_status
from tests.harness.systems.reference.cluster_kit import load_fault, reference_cluster


async def _until_whole(backend: Cluster, replacing: set[str], limit_s: float) -> float:
    """Seconds until the master reports every tablet whole; fails after ``limit_s``."""
    started = time.monotonic()
    while unrepaired(await master_status(backend), replacing) is not None:
        assert time.monotonic() - started < limit_s, unrepaired(await master_status(backend), replacing)
        await asyncio.sleep(0.5)
    return time.monotonic() - started


@pytest.mark.slow
def test_a_second_wipe_waits_until_the_first_is_repaired(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with reference_cluster(tmp_path, nemesis=["wipe"], tablets=2) as backend:
            await _until_whole(backend, set(), 30)
            pkg = load_fault("wipe")
            first = await pkg.start(backend, FaultSpec("wipe", "one"), random.Random(1))
            assert len(first["wiped"]) == 1 and "skipped" not in first, first
            # Every tablet the wiped node served still counts on its old identity: another wipe now
            # would leave those tablets one intact replica.
            second = await pkg.start(backend, FaultSpec("wipe", "one"), random.Random(2))
            assert "wiped" not in second and second["skipped"], second
            # Once the master has replaced it, the fault wipes again.
            await _until_whole(backend, {first["wiped"][0]}, 90)
            third = await pkg.start(backend, FaultSpec("wipe", "one"), random.Random(3))
            assert len(third.get("wiped", [])) == 1, third

    asyncio.run(scenario())


def test_unrepaired_names_what_is_missing() -> None:
    members = {"n1": {"name": "n1", "state": "left", "alive": False},
               "n1~2": {"name": "n1", "state": "normal", "alive": True},
               "n2": {"name": "n2", "state": "normal", "alive": True},
               "n3": {"name": "n3", "state": "normal", "alive": True}}
    whole = {"status": "steady", "migration": None, "rf": 3, "acting": ["n1~2", "n2", "n3"]}
    assert unrepaired({"members": members, "tablets": {"0": whole}}, {"n1"}) is None
    stale = {**whole, "acting": ["n1", "n2", "n3"]}
    assert "n1" in str(unrepaired({"members": members, "tablets": {"0": stale}}, {"n1"}))
    assert "not been retired" in str(unrepaired({"members": {**members, "n1": {"state": "normal", "alive": True}},
                                                 "tablets": {"0": whole}}, {"n1"}))
    moving = {**whole, "migration": {"new": "n4"}}
    assert "not whole" in str(unrepaired({"members": members, "tablets": {"0": moving}}, set()))
