"""How plots and timelines colour each kind of fault window.

A fault package registers its style once, when imported, and never edits this module::

    from reports.shading import register_fault_style
    register_fault_style("bitflip", "#e377c2", "bit flips on disk")

Fault packages in ``nemesis/`` need not do even that: each declares a ``color`` (the Nemesis
protocol), and the registry reads it from :mod:`nemesis.registry` on first use. A package from outside
the repository can name a mapping ``{fault: colour}`` or ``{fault: (colour, label)}`` under the
``fencepost.fault_styles`` entry-point group. An explicit registration beats both.

A fault with no style of its own takes the style of its longest registered prefix before a ``-``
(``partition-majority`` is shaded as ``partition``), else a stable colour derived from its name.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any

ENTRY_POINT_GROUP = "fencepost.fault_styles"


@dataclass(frozen=True)
class FaultStyle:
    """The look of one fault kind's windows.

    Attributes:
        fault: the fault's name, as in ``start-<fault>``.
        color: a CSS ``#rrggbb`` colour.
        label: words for legends.
        alpha: opacity of the shaded window in plots.
    """

    fault: str
    color: str
    label: str
    alpha: float = 0.18


_DEFAULTS: dict[str, tuple[str, str]] = {
    "partition": ("#e8743b", "network partition"),
    "kill": ("#d62728", "process kill"),
    "pause": ("#9467bd", "process pause"),
    "clock": ("#17becf", "clock skew"),
    "disk": ("#8c564b", "disk fault"),
    "restart": ("#7f7f7f", "restart"),
    "amnesia": ("#bcbd22", "lost unsynced writes"),
    "wipe": ("#2e86ab", "data wipe"),
    "latency": ("#1f77b4", "network latency"),
    "loss": ("#ff7f0e", "packet loss"),
}
_PALETTE = ("#e377c2", "#2ca02c", "#8c564b", "#17becf", "#bcbd22", "#9467bd", "#7f7f7f", "#1f77b4")

_registry: dict[str, FaultStyle] = {}
_discovered: dict[str, FaultStyle] = {}
_lock = threading.Lock()
_discovery_done = False


def register_fault_style(fault: str, color: str, label: str | None = None, *, alpha: float = 0.18) -> FaultStyle:
    """Register (or replace) the style for ``fault`` and return it."""
    style = FaultStyle(fault, color, label or _default_label(fault), alpha)
    with _lock:
        _registry[fault] = style
    return style


def _default_label(fault: str) -> str:
    return _DEFAULTS[fault][1] if fault in _DEFAULTS else fault


def _discover(fault: str, spec: Any) -> None:
    if isinstance(spec, str):
        _discovered[fault] = FaultStyle(fault, spec, _default_label(fault))
    elif isinstance(spec, (tuple, list)) and spec:
        _discovered[fault] = FaultStyle(fault, str(spec[0]), str(spec[1]) if len(spec) > 1 else _default_label(fault))


def _discover_all() -> None:
    """Read colours from the nemesis packages and the entry points, once; a broken one is skipped."""
    global _discovery_done
    with _lock:
        if _discovery_done:
            return
        _discovery_done = True
        try:
            from nemesis import registry

            for name in registry.available():
                try:
                    package = registry.load(name)
                    _discover(str(package.name), getattr(package, "color", None))
                except Exception:  # a broken package must not break every report
                    continue
        except ImportError:
            pass
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            try:
                loaded = ep.load()
                value = loaded() if callable(loaded) else loaded
                if isinstance(value, Mapping):
                    for fault, spec in value.items():
                        _discover(str(fault), spec)
            except Exception:
                continue


def _hashed(fault: str) -> str:
    digest = hashlib.sha1(fault.encode("utf-8")).digest()
    return _PALETTE[digest[0] % len(_PALETTE)]


def fault_style(fault: str) -> FaultStyle:
    """The style for ``fault``: registered, else declared by its package, else built in (each also by
    prefix), else a colour from its name."""
    _discover_all()
    with _lock:
        registered = {**_discovered, **_registry}
    name = fault
    while True:
        if name in registered:
            found = registered[name]
            if name == fault:
                return found
            return FaultStyle(fault, found.color, f"{found.label} ({fault})", found.alpha)
        if name in _DEFAULTS:
            color, label = _DEFAULTS[name]
            return FaultStyle(fault, color, label if name == fault else f"{label} ({fault})")
        if "-" not in name:
            break
        name = name.rsplit("-", 1)[0]
    return FaultStyle(fault, _hashed(fault), fault)
