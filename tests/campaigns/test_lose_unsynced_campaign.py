"""Power-loss campaigns: the correct system stays valid under lose-unsynced, and the two fsync bugs are caught
(nightly: ``--fencepost-nightly``).

``ack-before-fsync`` loses acknowledged writes when a majority loses power (amnesia rule 1);
``metadata-no-fsync`` brings a node back at an epoch it had left (amnesia rule 2). The settings are
the measured ones (README: 10 of 10 seeds each; see the lose-unsynced paragraph).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable

import pytest

from harness.launch import RunOutcome

pytestmark = [pytest.mark.campaign, pytest.mark.slow,
              pytest.mark.skipif(not os.path.exists("/dev/fuse") or shutil.which("fusermount3") is None,
                                 reason="needs /dev/fuse and fusermount3")]

SETTINGS = {"workload": "register", "nemesis": ["lose-unsynced"], "time_limit": 60, "nemesis_interval": 2,
            "concurrency": 10, "seed": 1}


def test_correct_system_survives_power_losses(run_test: Callable[..., RunOutcome]) -> None:
    outcome = run_test(**SETTINGS)
    assert outcome.valid is True, f"{outcome.results['valid']}: see {outcome.report or outcome.run.path}"
    assert outcome.ok_ops >= 500, f"only {outcome.ok_ops} ok ops: see {outcome.report or outcome.run.path}"


BUG_SEEDS = (1, 2)
"""Seeds tried in turn until one catches the bug. A power loss that leaves every replica damaged serves
nothing, so no client sees a write lost; amnesia rule 8 still sees each node's log end below the
commit index it checkpointed. A second seed is a margin, not an expected miss."""


@pytest.mark.nightly  # 3.5 minutes together: the nightly job runs them (make test stays under 45 minutes)
@pytest.mark.parametrize("bug", ["ack-before-fsync", "metadata-no-fsync"])
def test_fsync_bugs_are_caught(run_test: Callable[..., RunOutcome], bug: str) -> None:
    missed: list[str] = []
    for seed in BUG_SEEDS:
        outcome = run_test(**{**SETTINGS, "seed": seed}, bug=[bug])
        if outcome.valid is not False:
            missed.append(f"seed {seed}: {outcome.report or outcome.run.path}")
            continue
        amnesia = outcome.results["checkers"]["amnesia"]
        assert amnesia["valid"] is False
        wanted = ("1 ", "8 ") if bug == "ack-before-fsync" else ("2 epoch went down",)
        assert any(v["rule"].startswith(wanted) for v in amnesia["violations"]), amnesia["by_rule"]
        return
    pytest.fail(f"{bug} not caught in any of seeds {BUG_SEEDS}: {'; '.join(missed)}")
