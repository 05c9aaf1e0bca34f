"""The failover fault on a real local cluster, cut short by the run's end while it kills.

The clean default campaign at seed 10 (617df76): a `lagging-leader` window started 0.5 s before the run's
end, which cancelled it while its kill of n1 was under way. It noted the victim only once the kill
returned, so its heal did not start n1 again; tablet 1, whose two-member ensemble held n1, never elected a
leader, and `convergence` and `recovery` raised a false alarm.
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest

from harness.protocols import FaultSpec
from tests.plugins.reference.cluster_kit import (
    cut_short_after,
    heal_restarts_the_one_down,
    load_fault,
    reference_cluster,
    whole,
)


@pytest.mark.slow
def test_a_start_cut_short_during_its_kill_still_starts_the_victim_at_the_heal(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with reference_cluster(tmp_path, nodes=3, tablets=1, nemesis=["failover"]) as backend:
            await whole(backend, set(), 60)
            pkg = load_fault("failover")
            await cut_short_after(backend, "kill", pkg.start(backend, FaultSpec("failover", "lagging-leader"),
                                                             random.Random(1)))
            await heal_restarts_the_one_down(backend, pkg)

    asyncio.run(scenario())
