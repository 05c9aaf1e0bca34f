"""Fencepost's testing tools, public API as trio's are: what Fencepost's own tests use, and a plugin's may.

- :class:`~harness.testing.fake.FakeSystem` and :class:`~harness.testing.memory.MemoryBackend`: an
  in-memory system with switchable misbehaviours (``lost-write``, ``stale-read``) on a backend that
  starts nothing, so the runtime, workers, nemesis runner and checkers run end to end in milliseconds;
- :func:`run_fake`: one whole test of it, into a run store;
- :class:`~harness.testing.conformance.SystemConformance`: a pytest class a plugin subclasses to check
  itself against the plugin API on a real backend.
"""

from __future__ import annotations

from pathlib import Path

from harness.config import TestConfig
from harness.launch import RunOutcome, prepare, run_test
from harness.testing.fake import FakeStore, FakeSystem
from harness.testing.memory import MemoryBackend, NodeStates

__all__ = ["FakeStore", "FakeSystem", "MemoryBackend", "NodeStates", "run_fake"]


def run_fake(config: TestConfig, store: str | Path) -> RunOutcome:
    """Run ``config`` against a fresh :class:`FakeSystem` on a :class:`MemoryBackend` (its ``system`` and
    ``backend`` fields are ignored) and return the outcome, checked and reported like any run."""
    return run_test(config, store, prepared=prepare(config, system=FakeSystem(), backend=MemoryBackend()))
