"""Shared fixtures for the mutation tool's tests: the reference system's mutable modules and their mutants."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("cosmic_ray", reason="the mutate extra (cosmic-ray) is not installed")

from harness import registry
from harness.mutation.mutants import Mutant, enumerate_mutants, relative_modules


@pytest.fixture(scope="session")
def reference_modules() -> dict[str, Path]:
    """``{relative path: file}`` of the reference system's mutable modules."""
    plugin: Any = registry.load_system("reference")
    return relative_modules(plugin.mutable_modules(), plugin.code())


@pytest.fixture(scope="session")
def reference_mutants(reference_modules: dict[str, Path]) -> list[Mutant]:
    """Every mutant of the reference system's mutable modules."""
    return enumerate_mutants(reference_modules)
