"""The lagging-contract fault on a real local cluster: it waits its turn behind a recent damage."""

from __future__ import annotations

import asyncio
import random
import time
from pathlib import Path

import pytest
from fencepost_reference.faults.guard import VISIBLE_S, guard_of

from harness.protocols import FaultSpec
from tests.plugins.reference.cluster_kit import load_fault, reference_cluster, turn_free


@pytest.mark.slow
def test_a_removal_right_after_a_damage_waits_until_it_is_visible_instead_of_skipping(tmp_path: Path) -> None:
    # The default campaign at d7fe69f skipped 3 of contract-below-commit's 4 lagging-contract windows at
    # seeds 1-3 (once for a damage 2.2 s old), so the bug went uncaught. A window now waits its turn.
    async def scenario() -> None:
        async with reference_cluster(tmp_path, nodes=3, tablets=1, nemesis=["lagging-contract"]) as backend:
            await turn_free(backend, 60)
            async with guard_of(backend).turn(backend) as why:  # a damage, just done
                assert why is None
            damaged = time.monotonic()
            pkg = load_fault("lagging-contract")
            done = await pkg.start(backend, FaultSpec("lagging-contract", "remove-behind-laggard"), random.Random(1))
            assert "skipped" not in done and done["removed"] != done["lagging"], done
            assert time.monotonic() - damaged >= VISIBLE_S - 0.5
            assert (await pkg.stop(backend))["healed"]

    asyncio.run(scenario())
