"""Every injectable bug has a recipe that names real workloads and fault packages."""

from __future__ import annotations

import pytest
from fencepost_reference.plugin import ReferencePlugin
from fencepost_reference.recipes import RECIPES, missing_recipes, recipe

from harness import registry
from harness.config import TestConfig
from system.bugs import BUGS


def test_every_bug_has_a_recipe_and_every_recipe_a_bug() -> None:
    assert missing_recipes() == []
    assert set(RECIPES) == set(BUGS) == set(ReferencePlugin().bugs())


@pytest.mark.parametrize("bug", sorted(RECIPES))
def test_a_recipe_names_real_packages_and_makes_a_config(bug: str) -> None:
    plugin = ReferencePlugin()
    r = recipe(bug)
    assert r.workload in registry.workload_names() and r.workload in plugin.workloads
    assert set(r.nemesis) <= set(registry.nemesis_names(plugin)), set(r.nemesis) - set(registry.nemesis_names(plugin))
    config = TestConfig(**r.config_fields(), bug=[bug])
    assert config.nemesis == list(r.nemesis) and config.time_limit <= 120 and r.why
    for package, targets in r.targets.items():
        assert package in r.nemesis and set(targets) <= set(registry.load_nemesis(package, plugin).targets())


def test_an_unknown_bug_has_no_recipe() -> None:
    with pytest.raises(KeyError, match="no recipe for bug 'nope'"):
        recipe("nope")
