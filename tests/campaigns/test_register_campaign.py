"""A short default campaign: the register workload under each fault package, on the correct system.

``pytest -m campaign`` runs it; ``--fencepost-time-limit`` and ``--fencepost-store`` tune it.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from harness.backends import faketime
from harness.backends.iptables import why_unavailable
from harness.launch import RunOutcome

NEMESES = [["kill"], ["pause"], ["wipe"], ["corrupt"], ["clock"], ["partition"], ["partition", "kill", "pause", "wipe"]]


@pytest.mark.campaign
@pytest.mark.parametrize("nemesis", NEMESES, ids=["+".join(n) for n in NEMESES])
def test_register_stays_linearizable(run_test: Callable[..., RunOutcome], nemesis: list[str]) -> None:
    if "partition" in nemesis and why_unavailable() is not None:
        pytest.skip(f"partition: {why_unavailable()}")
    if "clock" in nemesis and faketime.why_unavailable() is not None:
        pytest.skip(f"clock: {faketime.why_unavailable()}")
    outcome = run_test(workload="register", nemesis=nemesis, time_limit=12, nemesis_interval=2, seed=11,
                       concurrency=8, recovery=3)
    assert outcome.valid is True, f"{outcome.results['valid']}: see {outcome.report or outcome.run.path}"
    assert outcome.ok_ops >= 200, f"only {outcome.ok_ops} ok ops: see {outcome.report or outcome.run.path}"
