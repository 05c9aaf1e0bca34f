"""Consistency models and anomalies as data: what each model prohibits, and what each anomaly implies.

The tables follow Elle's consistency-model namespace (Kingsbury & Alvaro) and Adya's thesis. Three relations:

* :data:`IMPLIED`: anomaly A implies anomaly B (a G0 cycle is also a G1c cycle; a G-single is also a
  G-nonadjacent; G1a, G1b and G1c are each G1). Every rw edge this checker infers is an item anti-dependency, so
  G-single and G-nonadjacent imply G2-item here, as in Adya (Elle writes these G-single-item and
  G-nonadjacent-item).
* :data:`STRONGER`: model M implies model N (a history that satisfies M satisfies N).
* :data:`DIRECT`: the anomalies a model prohibits on top of the models it implies.

A model prohibits an anomaly when the anomaly, or anything it implies, is prohibited directly by the model or by
a model it implies; so a stronger model prohibits everything a weaker one does. Verdicts are lookups here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache

# --- anomalies -----------------------------------------------------------------------------------------------

CYCLE_BASES = ("G0", "G1c", "G-single", "G-nonadjacent", "G2-item")
"""The cycle classes, weakest edge set first (the order the search tries them in)."""
VARIANTS = ("", "-process", "-realtime")
CYCLE_TYPES = tuple(base + v for v in VARIANTS for base in CYCLE_BASES)
"""Every cycle anomaly: the five classes, then their -process and -realtime variants."""

NON_CYCLE_TYPES = (
    "G1a", "G1b", "internal", "dirty-update", "lost-update", "duplicate-elements", "incompatible-order",
    "garbage-read", "future-read",
)
"""The anomalies found without a cycle search."""

ANOMALY_TYPES = CYCLE_TYPES + NON_CYCLE_TYPES
"""Every anomaly type this checker reports, with Elle's names."""

_IMPLIED_EDGES: dict[str, tuple[str, ...]] = {
    "G0": ("G1c", "G0-process"),
    "G0-process": ("G1c-process", "G0-realtime"),
    "G0-realtime": ("G1c-realtime",),
    "G1a": ("G1",),
    "G1b": ("G1",),
    "G1c": ("G1", "G1c-process"),
    "G1c-process": ("G1c-realtime", "G1-process"),
    "G1c-realtime": ("G1-realtime",),
    "G1": ("G1-process",),
    "G1-process": ("G1-realtime",),
    "G-single": ("G-nonadjacent", "G-single-process"),
    "G-single-process": ("G-nonadjacent-process", "G-single-realtime"),
    "G-single-realtime": ("G-nonadjacent-realtime",),
    "G-nonadjacent": ("G2-item", "G-nonadjacent-process"),
    "G-nonadjacent-process": ("G2-item-process", "G-nonadjacent-realtime"),
    "G-nonadjacent-realtime": ("G2-item-realtime",),
    "G2-item": ("G2", "G2-item-process"),
    "G2-item-process": ("G2-process", "G2-item-realtime"),
    "G2-item-realtime": ("G2-realtime",),
    "G2": ("G2-process",),
    "G2-process": ("G2-realtime",),
    # Two committed reads that no single order explains: one of them saw a state that never was (Elle).
    "incompatible-order": ("G1a",),
    # A transaction that reads its own later write: a one-transaction information cycle.
    "future-read": ("G1c",),
    # A committed write built on an aborted one: as bad as reading it.
    "dirty-update": ("G1a",),
    # Two transactions read the same version and both wrote the key: a G2-item on one key (Bailis, Adya).
    "lost-update": ("G2-item",),
}
IMPLIED: Mapping[str, tuple[str, ...]] = _IMPLIED_EDGES

# --- models --------------------------------------------------------------------------------------------------

ALIASES: Mapping[str, str] = {
    "strong-serializable": "strict-serializable",
    "conflict-serializable": "serializable",
    "PL-1": "read-uncommitted",
    "PL-2": "read-committed",
    "PL-CS": "cursor-stability",
    "PL-2+": "consistent-view",
    "PL-2.99": "repeatable-read",
    "PL-FCV": "forward-consistent-view",
    "PL-SI": "snapshot-isolation",
    "PL-3": "serializable",
    "PL-SS": "strict-serializable",
    "strong-session-PL-1": "strong-session-read-uncommitted",
    "strong-session-PL-2": "strong-session-read-committed",
    "strong-PL-1": "strong-read-uncommitted",
    "strong-PL-2": "strong-read-committed",
}
"""Other names for the same model (Adya's PL- levels, Elle's synonyms)."""

_STRONGER_EDGES: dict[str, tuple[str, ...]] = {
    "read-uncommitted": (),
    "read-committed": ("read-uncommitted",),
    "monotonic-atomic-view": ("read-committed",),
    "read-atomic": ("monotonic-atomic-view",),
    "cursor-stability": ("read-committed",),
    "monotonic-view": ("read-committed",),
    "consistent-view": ("cursor-stability", "monotonic-view"),
    "forward-consistent-view": ("consistent-view",),
    "repeatable-read": ("cursor-stability", "monotonic-atomic-view"),
    "snapshot-isolation": ("forward-consistent-view", "monotonic-atomic-view", "read-atomic"),
    "update-serializable": ("forward-consistent-view",),
    "serializable": ("repeatable-read", "snapshot-isolation", "update-serializable"),
    "strong-session-read-uncommitted": ("read-uncommitted",),
    "strong-session-read-committed": ("read-committed", "strong-session-read-uncommitted"),
    "strong-read-uncommitted": ("strong-session-read-uncommitted",),
    "strong-read-committed": ("strong-session-read-committed", "strong-read-uncommitted"),
    "strong-session-snapshot-isolation": ("snapshot-isolation", "strong-session-read-committed"),
    "strong-snapshot-isolation": ("strong-session-snapshot-isolation", "strong-read-committed"),
    "strong-session-serializable": ("serializable", "strong-session-snapshot-isolation"),
    "strict-serializable": ("serializable", "strong-snapshot-isolation", "strong-session-serializable"),
}
STRONGER: Mapping[str, tuple[str, ...]] = _STRONGER_EDGES

_DIRECT_EDGES: dict[str, tuple[str, ...]] = {
    # Version orders are total and values unique, so a read of something never written, or of an element
    # twice, breaks even the weakest model.
    "read-uncommitted": ("G0", "duplicate-elements", "garbage-read"),
    "read-committed": ("G1",),
    "monotonic-atomic-view": (),
    "read-atomic": ("internal", "G1a", "future-read"),
    "cursor-stability": ("G1", "lost-update"),
    "monotonic-view": ("G1",),
    "consistent-view": ("G1", "G-single"),
    "forward-consistent-view": ("G1",),
    "repeatable-read": ("G1", "G2-item", "lost-update"),
    "snapshot-isolation": ("internal", "G1", "G-nonadjacent"),
    "update-serializable": ("G1",),
    "serializable": ("internal", "G1", "G2"),
    "strong-session-read-uncommitted": ("G0-process",),
    "strong-session-read-committed": ("G1c-process",),
    "strong-read-uncommitted": ("G0-realtime",),
    "strong-read-committed": ("G1c-realtime",),
    "strong-session-snapshot-isolation": ("internal", "G1-process", "G-nonadjacent-process"),
    "strong-snapshot-isolation": ("internal", "G1-realtime", "G-nonadjacent-realtime"),
    "strong-session-serializable": ("G1-process", "G2-process"),
    "strict-serializable": ("G1", "G1c-realtime", "G2-realtime"),
}
DIRECT: Mapping[str, tuple[str, ...]] = _DIRECT_EDGES

CONSISTENCY_MODELS: tuple[str, ...] = (*_STRONGER_EDGES, *ALIASES)
"""Every model name accepted: Elle's transactional models and their synonyms."""

MAIN_MODELS = (
    "read-uncommitted", "read-committed", "repeatable-read", "snapshot-isolation", "serializable",
    "strict-serializable", "strong-session-snapshot-isolation", "strong-snapshot-isolation",
    "strong-session-serializable",
)
"""The models the docs' table and ``--help`` lead with."""


class UnknownModel(ValueError):
    """A consistency model name this checker does not know."""


def canonical(model: str) -> str:
    """The model's own name (``strong-serializable`` -> ``strict-serializable``).

    Raises:
        UnknownModel: the name is not a known model.
    """
    name = ALIASES.get(model, model)
    if name not in _STRONGER_EDGES:
        raise UnknownModel(f"unknown consistency model {model!r}; known: {', '.join(MAIN_MODELS)} "
                           f"(and {', '.join(sorted(set(CONSISTENCY_MODELS) - set(MAIN_MODELS)))})")
    return name


def _closure(start: Iterable[str], edges: Mapping[str, Iterable[str]]) -> set[str]:
    seen: set[str] = set()
    todo = list(start)
    while todo:
        x = todo.pop()
        if x not in seen:
            seen.add(x)
            todo.extend(edges.get(x, ()))
    return seen


def _reverse(edges: Mapping[str, Iterable[str]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for a, bs in edges.items():
        for b in bs:
            out.setdefault(b, []).append(a)
    return out


_IMPLIED_BY = _reverse(_IMPLIED_EDGES)
_WEAKER_TO_STRONGER = _reverse(_STRONGER_EDGES)


def implied_anomalies(anomalies: Iterable[str]) -> set[str]:
    """The anomalies given and every anomaly they imply."""
    return set(_implied(frozenset(anomalies)))


@lru_cache(maxsize=1024)
def _implied(anomalies: frozenset[str]) -> frozenset[str]:
    return frozenset(_closure(anomalies, _IMPLIED_EDGES))


def implied_models(models: Iterable[str]) -> set[str]:
    """The models given (canonical names) and every weaker model they imply."""
    return _closure((canonical(m) for m in models), _STRONGER_EDGES)


def prohibited_by(models: Iterable[str]) -> set[str]:
    """Every anomaly that cannot be present if all of ``models`` hold (including aggregate names like G1)."""
    return set(_prohibited(frozenset(canonical(m) for m in models)))


@lru_cache(maxsize=256)
def _prohibited(models: frozenset[str]) -> frozenset[str]:
    direct = {a for m in implied_models(models) for a in _DIRECT_EDGES[m]}
    return frozenset(_closure(direct, _IMPLIED_BY))


def ruled_out(anomalies: Iterable[str]) -> set[str]:
    """Every model that the presence of ``anomalies`` rules out."""
    return set(_ruled_out(frozenset(anomalies)))


@lru_cache(maxsize=1024)
def _ruled_out(anomalies: frozenset[str]) -> frozenset[str]:
    present = implied_anomalies(anomalies)
    direct = {m for m, prohibited in _DIRECT_EDGES.items() if present.intersection(prohibited)}
    return frozenset(_closure(direct, _WEAKER_TO_STRONGER))


def weakest(models: Iterable[str]) -> list[str]:
    """The models of a set that no other model of the set is weaker than (Elle's ``:not``), sorted."""
    ms = set(models)
    return sorted(m for m in ms if not any(o != m and o in implied_models([m]) for o in ms))


def graph_needs(models: Iterable[str]) -> str:
    """Which order edges the models need beside the data edges: ``"realtime"``, ``"process"`` or ``""``.

    Real time includes process order (a process runs one transaction at a time), so a realtime graph finds the
    process anomalies too, classified -realtime, as Elle does.
    """
    prohibited = prohibited_by(models)
    if any(a.endswith("-realtime") for a in prohibited if a in CYCLE_TYPES):
        return "realtime"
    if any(a.endswith("-process") for a in prohibited if a in CYCLE_TYPES):
        return "process"
    return ""
