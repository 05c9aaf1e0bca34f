"""Find fault packages by name: package ``NAME`` is the module ``nemesis.NAME`` with a ``package()`` factory.

Adding a fault is adding a file; nothing here changes. A module name's underscores are dashes in the
package name (``nemesis/lose_unsynced.py`` is ``--nemesis lose-unsynced``).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable

import nemesis
from harness.protocols import Nemesis

_NOT_PACKAGES = {"registry", "targets", "process_fault"}


def available() -> list[str]:
    """The names of every fault package in the nemesis folder."""
    names = (m.name for m in pkgutil.iter_modules(nemesis.__path__))
    return sorted(n.replace("_", "-") for n in names if n not in _NOT_PACKAGES and not n.startswith("_"))


def load(name: str) -> Nemesis:
    """A fresh instance of fault package ``name``.

    Raises:
        ValueError: there is no such package.
    """
    if name not in available():
        raise ValueError(f"unknown nemesis {name!r}; available: {', '.join(available())}")
    module = importlib.import_module(f"nemesis.{name.replace('-', '_')}")
    pkg = module.package()
    assert isinstance(pkg, Nemesis), f"nemesis.{name}.package() does not satisfy the Nemesis protocol"
    return pkg


def needs(names: Iterable[str]) -> frozenset[str]:
    """What the backend must prepare for fault packages ``names`` (e.g. "faketime", "lazyfs").

    A package declares it with an optional ``needs`` attribute, a set of names; packages without one
    need nothing special.
    """
    out: set[str] = set()
    for name in names:
        out |= set(getattr(load(name), "needs", ()))
    return frozenset(out)
