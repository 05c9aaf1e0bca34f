"""Find workloads by name: workload ``NAME`` is the module ``workloads.NAME`` with a ``workload(config)`` factory."""

from __future__ import annotations

import importlib
import pkgutil

import workloads
from harness.config import TestConfig
from harness.protocols import Workload

_NOT_WORKLOADS = {"registry", "reference_client"}


def available() -> list[str]:
    """The names of every workload in the workloads folder."""
    names = (m.name for m in pkgutil.iter_modules(workloads.__path__))
    return sorted(n for n in names if n not in _NOT_WORKLOADS and not n.startswith("_"))


def load(name: str, config: TestConfig) -> Workload:
    """The workload ``name`` for ``config``.

    Raises:
        ValueError: there is no such workload.
    """
    if name not in available():
        raise ValueError(f"unknown workload {name!r}; available: {', '.join(available())}")
    wl = importlib.import_module(f"workloads.{name}").workload(config)
    assert isinstance(wl, Workload), f"workloads.{name}.workload() does not satisfy the Workload protocol"
    return wl
