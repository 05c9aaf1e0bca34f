"""Shared test helpers: where the shared data lives."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
PORCUPINE = SHARED / "data" / "porcupine"


@pytest.fixture(scope="session")
def porcupine_dir() -> Path:
    """The Porcupine test histories; skips if ../shared is not beside the repository."""
    if not (PORCUPINE / "expected.tsv").exists():
        pytest.skip(f"Porcupine data not found at {PORCUPINE}")
    return PORCUPINE
