"""The wipe fault on a real local cluster: it wipes a node only while every tablet is whole."""

from __future__ import annotations

import asyncio
import random
import time
from pathlib import Path

import pytest

from harness.protocols import FaultSpec
from harness.systems.reference.faults.guard import VISIBLE_S
from tests.harness.systems.reference.cluster_kit import load_fault, reference_cluster, whole


@pytest.mark.slow
def test_a_second_wipe_waits_until_the_first_is_repaired(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with reference_cluster(tmp_path, nemesis=["wipe"], tablets=2) as backend:
            await whole(backend, set(), 30)
            pkg = load_fault("wipe")
            first = await pkg.start(backend, FaultSpec("wipe", "one"), random.Random(1))
            wiped_at = time.monotonic()
            assert len(first["wiped"]) == 1 and "skipped" not in first, first
            # Every tablet the wiped node served still counts on its old identity: another wipe now
            # would leave those tablets one intact replica.
            second = await pkg.start(backend, FaultSpec("wipe", "one"), random.Random(2))
            assert "wiped" not in second and second["skipped"], second
            # Once the master has replaced it (and the damage guard's VISIBLE_S have passed), the fault wipes again.
            await whole(backend, {first["wiped"][0]}, 90)
            await asyncio.sleep(max(0.0, VISIBLE_S - (time.monotonic() - wiped_at)))
            third = await pkg.start(backend, FaultSpec("wipe", "one"), random.Random(3))
            assert len(third.get("wiped", [])) == 1, third

    asyncio.run(scenario())
