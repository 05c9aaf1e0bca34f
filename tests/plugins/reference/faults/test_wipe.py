"""The wipe fault on a real local cluster: it wipes a node only while every tablet is whole."""

from __future__ import annotations

import asyncio
import random
import time
from pathlib import Path

import pytest
from fencepost_reference.faults.guard import VISIBLE_S, guard_of
from fencepost_reference.master import master_status

from harness.protocols import FaultSpec
from tests.plugins.reference.cluster_kit import cut_short_after, load_fault, reference_cluster, rejoined, whole


@pytest.mark.slow
def test_a_second_wipe_waits_until_the_first_is_repaired(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with reference_cluster(tmp_path, nemesis=["wipe"], tablets=2) as backend:
            await whole(backend, set(), 30)
            pkg = load_fault("wipe")
            first = await pkg.start(backend, FaultSpec("wipe", "one"), random.Random(1))
            wiped_at = time.monotonic()
            assert len(first["wiped"]) == 1 and "skipped" not in first, first
            replaced = set(guard_of(backend).replacing)
            assert replaced, "the wipe named the old identity the master must retire"
            # Every tablet the wiped node served still counts on its old identity: another wipe now
            # would leave those tablets one intact replica. One that does not wait skips.
            pkg.wait_s = 0.0  # type: ignore[attr-defined]
            second = await pkg.start(backend, FaultSpec("wipe", "one"), random.Random(2))
            assert "wiped" not in second and second["skipped"], second
            # One that waits wipes once the master has replaced the first (and VISIBLE_S have passed).
            pkg.wait_s = 90.0  # type: ignore[attr-defined]
            third = await pkg.start(backend, FaultSpec("wipe", "one"), random.Random(3))
            assert len(third.get("wiped", [])) == 1, third
            assert time.monotonic() - wiped_at >= VISIBLE_S
            members = (await master_status(backend)).get("members") or {}
            assert all(members[m]["state"] == "left" for m in replaced), members

    asyncio.run(scenario())


@pytest.mark.slow
def test_a_wipe_cut_short_after_its_erase_is_finished_at_the_heal(tmp_path: Path) -> None:
    # A wipe whose turn came late in the run may still be wiping when the run ends: its heal must bring
    # the node back, on its new, empty disk.
    async def scenario() -> None:
        async with reference_cluster(tmp_path, nemesis=["wipe"], tablets=1) as backend:
            await whole(backend, set(), 30)
            pkg = load_fault("wipe")
            await cut_short_after(backend, "erase", pkg.start(backend, FaultSpec("wipe", "one"), random.Random(1)))
            (down,) = [n for n in backend.nodes() if not backend.processes.running(n)]
            await pkg.heal(backend)
            assert backend.processes.running(down)
            await rejoined(backend, down, 90)

    asyncio.run(scenario())
