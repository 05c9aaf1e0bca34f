"""Fencepost's testing tools, public API as trio's are: what Fencepost's own tests use, and a plugin's may.

- :class:`~harness.testing.fake.FakeSystem` and :class:`~harness.testing.memory.MemoryBackend`: an
  in-memory system with switchable misbehaviours (``lost-write``, ``stale-read``, ``snapshot-isolation``)
  on a backend that starts nothing, so the runtime, workers, nemesis runner and checkers run end to end in
  milliseconds; its transactions run on :class:`~harness.testing.txn_store.TxnStore`. Installed as the
  testing system ``fake`` and the backend ``memory``, so ``fencepost test --system fake --backend memory``
  runs one from the command line;
- :func:`run_fake`: one whole test of it, into a run store;
- :class:`~harness.testing.conformance.SystemConformance`: a pytest class a plugin subclasses to check
  itself against the plugin API on a real backend, and
  :class:`~harness.testing.conformance.TransactionalConformance` its transactional client against the
  client contract.
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
