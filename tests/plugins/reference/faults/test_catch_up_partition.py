"""The catch-up-partition fault on a real local cluster: it cuts the leader the tablet has at promote.

In the default campaign other faults replace leaders while a migration runs. At 6852d02 (seed 2) a window
read the tablet's leader before it added the replica, the leader was replaced during the copy, and the
partition cut the old one off with the new replica: the real leader went on committing with its voters,
and ``count-pre-voter-acks`` went uncaught.
"""

from __future__ import annotations

import asyncio
import random
import time
from pathlib import Path

import pytest
from fencepost_reference.faults.catch_up_partition import DEPOSED_HOLD_S
from fencepost_reference.master import master_status, restore_replica_counts

from harness.protocols import FaultSpec
from tests.plugins.reference.cluster_kit import kill_spare, load_fault, reference_cluster, routed, whole

SPEC = FaultSpec("catch-up-partition", "cut-voters")


@pytest.mark.slow
def test_a_leader_replaced_during_the_copy_is_not_the_one_cut(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with reference_cluster(tmp_path, nodes=4, tablets=1, nemesis=["catch-up-partition"]) as backend:
            await whole(backend, set(), 60)
            old = await routed(backend, 0, 60)
            pkg = load_fault("catch-up-partition")
            window = asyncio.create_task(pkg.start(backend, SPEC, random.Random(1)))
            deadline = time.monotonic() + 10
            while (await master_status(backend))["tablets"]["0"]["migration"] is None:
                assert time.monotonic() < deadline and not window.done(), "the window started no migration"
                await asyncio.sleep(0.01)
            await backend.processes.kill(old)  # the copy is under way: the operators elect another leader
            try:
                while (await routed(backend, 0, 60)) == old:
                    assert time.monotonic() < deadline + 30, "no other leader was elected"
                    await asyncio.sleep(0.1)
            finally:
                await backend.processes.start(old)  # back as a voter, to help elect the next leader
            done = await asyncio.wait_for(window, 120)
            first = (done.get("rounds") or [done])[0]
            assert first.get("leader") not in (None, old), done  # old code: the leader read before the migration
            assert "skipped" not in done and done["synced"] is True, done
            cut_from = set(done["grudge"][done["leader"]])
            assert done["catching_up"] not in cut_from and set(done["voters"]) <= cut_from, done
            await pkg.stop(backend)
            await routed(backend, 0, 60)

    asyncio.run(scenario())


@pytest.mark.slow
def test_a_window_waits_for_a_spare_node_and_keeps_its_raised_count_when_another_window_ends(tmp_path: Path) -> None:
    # In the default campaign at f78528b (seed 2) another window's end put every tablet's replica count back
    # while this window's migration was copying: the operator cancelled it, and the window cut nothing.
    async def scenario() -> None:
        async with reference_cluster(tmp_path, nodes=4, tablets=1, nemesis=["catch-up-partition"]) as backend:
            await whole(backend, set(), 60)
            await routed(backend, 0, 60)
            spare = await kill_spare(backend, "0")
            st = await master_status(backend)
            name = {m: r["name"] for m, r in st["members"].items()}
            pkg = load_fault("catch-up-partition")
            window = asyncio.create_task(pkg.start(backend, SPEC, random.Random(1)))
            await asyncio.sleep(1.0)
            assert not window.done(), window.result()  # old code: skipped at once, no spare live node
            await backend.processes.start(spare)
            deadline = time.monotonic() + 30
            while (await master_status(backend))["tablets"]["0"]["migration"] is None:
                assert time.monotonic() < deadline and not window.done(), "the window started no migration"
                await asyncio.sleep(0.01)
            assert await restore_replica_counts(backend) == {}  # another window ends: this tablet is held
            leaders: list[tuple[float, str]] = []
            while not window.done():
                leaders.append((time.monotonic(), name.get(st["tablets"]["0"]["leader"] or "", "")))
                await asyncio.sleep(0.1)
                st = await master_status(backend)
                name |= {m: r["name"] for m, r in st["members"].items()}
            returned = time.monotonic()
            done = window.result()
            assert "skipped" not in done, done
            named = min(t for t, leader in leaders if leader == done["new_leader"])
            assert returned - named >= DEPOSED_HOLD_S - 1.0, done  # old code: healed 0.2 s after the election
            assert (await pkg.stop(backend))["restored"] == {"0": 3}
            await routed(backend, 0, 60)

    asyncio.run(scenario())


@pytest.mark.slow
def test_a_try_spoiled_by_a_restart_of_the_cut_leader_is_made_again(tmp_path: Path) -> None:
    # At b7ef3f7 (seed 1 of the default campaign, count-pre-voter-acks) another window restarted the cut-off
    # leader in the middle of the window's one cut: it acknowledged nothing more, and the bug was missed.
    async def scenario() -> None:
        async with reference_cluster(tmp_path, nodes=4, tablets=1, nemesis=["catch-up-partition"]) as backend:
            await whole(backend, set(), 60)
            await routed(backend, 0, 60)
            pkg = load_fault("catch-up-partition")
            window = asyncio.create_task(pkg.start(backend, SPEC, random.Random(1)))
            deadline = time.monotonic() + 40
            while not backend.network.cuts():  # type: ignore[attr-defined]
                assert time.monotonic() < deadline and not window.done(), "the window cut nothing"
                await asyncio.sleep(0.01)
            st = await master_status(backend)
            cut = {m: r["name"] for m, r in st["members"].items()}[st["tablets"]["0"]["leader"]]
            await backend.processes.kill(cut)  # another window's kill, in the middle of the cut
            await backend.processes.start(cut)
            done = await asyncio.wait_for(window, 120)
            first = done.get("rounds", [{}])[0]
            assert first.get("leader") == cut and "no longer leading" in first.get("spoiled", ""), done
            assert done["exposed"] is True and done["new_leader"], done  # old code: one try, no rounds
            assert (await pkg.stop(backend))["restored"] == {"0": 3}
            await routed(backend, 0, 60)

    asyncio.run(scenario())
