"""Fencepost's testing tools for plugin authors, public as trio's are: what Fencepost's own tests use.

- :class:`FakeSystem` on a :class:`MemoryBackend`: an in-memory system with switchable misbehaviours
  (``lost-write``, ``stale-read``, ``snapshot-isolation``) on a backend that starts nothing, so a workload, fault
  package or checker runs end to end in milliseconds;
- :func:`run_fake`: one whole test of it, into a run store;
- :class:`SystemConformance`: a pytest class a plugin subclasses to check itself against the plugin API on
  a real backend;
- :class:`TransactionalConformance`: the same for a system that runs list-append or rw-register: its client
  keeps the transactional client contract (reads filled in, ok and fail true to what committed).
"""

from __future__ import annotations

from harness.testing import FakeStore, FakeSystem, MemoryBackend, NodeStates, run_fake
from harness.testing.conformance import SystemConformance, TransactionalConformance

__all__ = ["FakeStore", "FakeSystem", "MemoryBackend", "NodeStates", "SystemConformance", "TransactionalConformance",
           "run_fake"]
