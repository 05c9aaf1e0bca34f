"""The public API: one module for plugin authors, and the shipped plugins held to it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import fencepost
import fencepost.testing

REPO = Path(__file__).resolve().parents[2]


def test_every_exported_name_is_there_and_the_protocols_and_records_say_what_they_are() -> None:
    for module in (fencepost, fencepost.testing):
        missing = [n for n in module.__all__ if not hasattr(module, n)]
        assert not missing, f"{module.__name__} exports names it lacks: {missing}"
        undocumented = [n for n in module.__all__ if isinstance(getattr(module, n), type)
                        and not (getattr(module, n).__doc__ or "").strip()]
        assert not undocumented, f"{module.__name__}: classes without a docstring: {undocumented}"
    contract = {"SystemPlugin", "ProcessSpec", "Layout", "Client", "Invocation", "Outcome", "ClusterView",
                "Checker", "CheckContext", "Nemesis", "Recipe", "Bug", "TestConfig", "SystemOption"}
    assert contract <= set(fencepost.__all__)
    assert {"FakeSystem", "MemoryBackend", "SystemConformance"} <= set(fencepost.testing.__all__)


def test_the_import_contracts_hold() -> None:
    """Plugins import only fencepost, the framework no plugin, system/ nothing of ours (import-linter), and
    toy_kv, as an outside plugin, holds itself to fencepost alone in its own pyproject."""
    lint = [str(Path(sys.executable).with_name("lint-imports")), "--no-cache"]
    done = subprocess.run(lint, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    for contract in ("Plugins import the framework only through the public fencepost module",
                     "The framework imports no plugin", "system/ is the reference store: it imports nothing"):
        assert contract in done.stdout
    assert "0 broken" in done.stdout
    toy = subprocess.run(lint, cwd=REPO / "examples" / "toy_kv", capture_output=True, text=True, timeout=300)
    assert toy.returncode == 0, toy.stdout[-3000:] + toy.stderr[-2000:]
    assert "toy_kv imports the framework only through the public fencepost module KEPT" in toy.stdout
