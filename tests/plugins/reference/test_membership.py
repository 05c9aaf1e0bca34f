"""The reference system's membership State on a real local cluster: retire-and-readd retires the node's live
member, even after a wipe gave the node a new one; a swap moves a follower to a spare node and the placement
moves it back."""

from __future__ import annotations

import asyncio
import random
import time
from pathlib import Path

import pytest
from fencepost_reference.info import operator_call
from fencepost_reference.master import master_status

from tests.plugins.reference.cluster_kit import reference_cluster, rejoined, whole


@pytest.mark.slow
def test_retire_and_readd_retires_the_live_member_of_a_wiped_node(tmp_path: Path) -> None:
    # The clean default campaign at seed 10 (62f7d1d): n4 had been wiped (member n4~2) and retire-and-readd
    # asked the master to retire "n4", the old identity, long left; the master answered "already retired",
    # n4~2 kept its replicas, and the window's end wiped them: a replica's data gone outside the damage guard.
    async def scenario() -> None:
        async with reference_cluster(tmp_path, nodes=4, tablets=1, nemesis=["membership", "wipe"]) as backend:
            seed = 3
            draw = random.Random(seed)
            draw.choice(["0"])  # the change's first draw is the tablet, then the node
            node = draw.choice(sorted(backend.nodes()))
            await whole(backend, set(), 60)
            await backend.wipe(node)
            member = await rejoined(backend, node, 90)

            state = backend.membership
            out = await state.change(backend, "retire-and-readd", random.Random(seed))
            assert out["retired"] == node and out["member"] == member, out
            st = await master_status(backend)
            assert st["members"][member]["state"] in ("decommissioning", "left"), st["members"][member]
            # The window's end wipes it only once drained; the heal brings it back as a new member either way.
            await state.settle(backend)
            deadline = time.monotonic() + 30
            while True:
                st = await master_status(backend)
                if any(r["name"] == node and r["state"] == "normal" and m not in (node, member)
                       for m, r in st["members"].items()):
                    break
                assert time.monotonic() < deadline, st["members"]
                await asyncio.sleep(0.5)
            assert st["members"][member]["state"] == "left"

    asyncio.run(scenario())


@pytest.mark.slow
def test_a_swap_replaces_a_follower_by_a_spare_node_and_the_placement_moves_it_back(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with reference_cluster(tmp_path, nodes=4, tablets=1, nemesis=["membership"]) as backend:
            await whole(backend, set(), 60)
            before = (await operator_call(backend, "status", {}))["tablets"]["0"]
            out = await backend.membership.change(backend, "swap", random.Random(1))
            assert "skipped" not in out and "refused" not in out, out
            assert out["old"] in before["ensemble"] and out["old"] != before["leader"], (out, before)
            assert out["new"] not in before["ensemble"], (out, before)
            assert sorted(out["ensemble"]) == sorted([m for m in before["ensemble"] if m != out["old"]] + [out["new"]])
            assert out["epoch"] > before["epoch"]
            await backend.membership.settle(backend)
            tab = (await master_status(backend))["tablets"]["0"]
            assert sorted(tab["acting"]) == sorted(tab["up"]) and tab["migration"] is None, tab

    asyncio.run(scenario())
