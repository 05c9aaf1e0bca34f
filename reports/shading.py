"""How plots and timelines colour each kind of fault window.

A run records its fault packages' colours when it starts (``faults.json`` in the run folder: each
package declares a ``color``, the Nemesis protocol), so a stored run renders in its own colours
without the fault code; :func:`recorded_styles` reads them, and they beat everything below.
Code may also register a style once, when imported, and never edit this module::

    from reports.shading import register_fault_style
    register_fault_style("bitflip", "#e377c2", "bit flips on disk")

A package from outside the repository can name a mapping ``{fault: colour}`` or ``{fault: (colour,
label)}`` under the ``fencepost.fault_styles`` entry-point group. An explicit registration beats it.

A fault with no style of its own takes the style of its longest registered prefix before a ``-``
(``partition-majority`` is shaded as ``partition``), else a stable colour derived from its name.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

ENTRY_POINT_GROUP = "fencepost.fault_styles"
FAULTS_FILE = "faults.json"
"""The file in a run folder where the run records its fault packages' styles."""


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
    """Read colours from the entry points, once; a broken one is skipped."""
    global _discovery_done
    with _lock:
        if _discovery_done:
            return
        _discovery_done = True
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


def recorded_styles(run_dir: str | Path | None) -> dict[str, FaultStyle]:
    """The fault styles a run recorded in ``faults.json`` (``{fault: {"color", "label"}}``); empty when it
    recorded none or the file cannot be read."""
    if run_dir is None:
        return {}
    try:
        data = json.loads((Path(run_dir) / FAULTS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, Mapping):
        return {}
    out: dict[str, FaultStyle] = {}
    for fault, spec in data.items():
        if isinstance(spec, Mapping) and isinstance(spec.get("color"), str):
            out[str(fault)] = FaultStyle(str(fault), spec["color"], str(spec.get("label") or _default_label(fault)))
    return out


def fault_style(fault: str, recorded: Mapping[str, FaultStyle] | None = None) -> FaultStyle:
    """The style for ``fault``: recorded by the run, else registered, else declared through an entry
    point, else built in (each also by prefix), else a colour from its name."""
    _discover_all()
    with _lock:
        registered = {**_discovered, **_registry, **dict(recorded or {})}
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
