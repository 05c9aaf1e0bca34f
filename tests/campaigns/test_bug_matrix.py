"""The seeded-bug detection matrix.

In CI (``make test``) a short subset runs: a few bugs whose recipes catch them quickly, each once with
the bug (it must be caught) and once without (no false alarm). With ``--fencepost-nightly`` every bug
runs its recipe over ten seeds, and over the same ten seeds without the bug: it must be caught in at
least nine, and the clean system must pass all ten. The runs form one campaign, whose page in the
store's index shows the detection table.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from fencepost_reference.recipes import RECIPES, recipe

from harness.backends.iptables import why_unavailable
from harness.bug_matrix import passed, run_matrix, summarize
from harness.launch import RunOutcome
from harness.pytest_plugin import CampaignSettings

CI_SUBSET = {"no-cas-config-change": 1, "stale-copy-session": 1, "commit-prior-epoch": 3}
"""Bug -> a seed, for the CI subset: three bugs, each seen by a different checker (config-cas, topology-guards,
commit-epoch), each caught in at least 9 of 10 seeds by ``fencepost matrix``; about 4 minutes with the clean
twins (the stale-copy-session twin also checks that a client finds a moved tablet again). Every other bug
runs in the nightly matrix (``--fencepost-nightly``) and in ``fencepost matrix``: ``make test`` stays under
45 minutes on a 2-core machine."""

NIGHTLY_SEEDS = range(1, 11)

NOT_CAUGHT_YET: dict[str, str] = {}
"""Bug -> why no recipe catches it yet (none today): the nightly expects such a bug to fail, strictly, so
a recipe that starts catching one shows up as an unexpected pass."""


def _nightly_params() -> list[object]:
    return [pytest.param(bug, marks=pytest.mark.xfail(strict=True, reason=f"not caught yet: {NOT_CAUGHT_YET[bug]}"))
            if bug in NOT_CAUGHT_YET else bug for bug in sorted(RECIPES)]


def _needs_iptables(bug: str) -> None:
    if {"partition", "failover", "lossy-link"} & set(recipe(bug).nemesis) and why_unavailable() is not None:
        pytest.skip(f"{bug}'s recipe needs network faults: {why_unavailable()}")


@pytest.mark.campaign
@pytest.mark.slow
@pytest.mark.parametrize("bug", sorted(CI_SUBSET))
def test_the_bug_is_caught_and_its_clean_twin_passes(run_test: Callable[..., RunOutcome], bug: str) -> None:
    _needs_iptables(bug)
    fields = {**recipe(bug).config_fields(), "seed": CI_SUBSET[bug]}
    targets = fields.pop("extra")
    caught = run_test(**fields, bug=[bug], extra={**targets, "case": bug})
    assert caught.valid is False, f"{bug} was not caught: see {caught.report or caught.run.path}"
    assert caught.results["detection"]["checkers"], caught.results["detection"]
    clean = run_test(**fields, extra={**targets, "case": f"clean ({bug})"})
    assert clean.valid is True, f"false alarm without {bug}: see {clean.report or clean.run.path}"


@pytest.mark.nightly
@pytest.mark.campaign
@pytest.mark.parametrize("bug", _nightly_params())
def test_nightly_matrix(campaign_settings: CampaignSettings, bug: str) -> None:
    _needs_iptables(bug)
    s = campaign_settings
    cells = run_matrix([bug], NIGHTLY_SEEDS, s.store, recipes={bug: recipe(bug)}, system=s.system,
                       backend=s.backend, time_limit=s.time_limit, campaign=s.campaign)
    rows = summarize(cells)
    assert passed(rows, 0.9), [r.as_dict() for r in rows]
