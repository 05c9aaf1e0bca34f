"""The classic faults every default campaign does first, where the run can: the obvious things to try on any system.

A user's first question about a campaign run on a system nobody wrote a recipe for is whether it tried the
obvious: kill the leader, a follower and the whole cluster, pull the power, cut the leader off, cut a
follower off, split a majority from a minority, pause the leader and a follower, jump and strobe a clock,
change the membership. Each classic here is one fault package and the targets that express it, in order of
preference; the run's packages decide which it can do (:func:`resolve`), and :func:`harness.mix.mixed_schedule`
gives them their windows before it deals the rest. Every system gets the same list: a plugin declares its
roles and capabilities, and the classics follow from what its packages then offer.

A classic a run cannot do is not offered, with the reason (the system lacks the capability, the backend
cannot carry it out here, the package offers no such target, or the system does not say who leads); one the
run is too short for is left out. The offered and the not offered are recorded in the run (``test.json``'s
``extra["classics"]``), each classic window in its schedule (``schedule.json``'s ``classic``) and, once it
strikes, in the history (the start's ``classic``); ``fencepost test --plan`` and the report list them all
(:func:`rows`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.capabilities import PRIMARIES
from harness.plugin_api import ExplainsGaps
from harness.protocols import Nemesis

CLASSIC_SHARE = 0.65
"""The most of a run's windows the classics take (:func:`harness.mix.mixed_schedule`), so that the aimed
packages keep the rest: a run too short to give every classic a window at this share leaves the last ones
of its seed's order out. At the default interval (3 s) a 60 s run has 19 to 29 windows (seeds 1 to 200,000),
room for twelve classics in each."""


@dataclass(frozen=True)
class Classic:
    """One classic fault.

    Attributes:
        name: how the plan and the report name it (``kill-leader``).
        what: what it does, in words.
        package: the fault package that does it.
        targets: the package's targets that express it, the first the package offers winning; empty: any of
            the package's targets, drawn by the mix's weights (a membership change of any kind).
        leader: whether it needs to know who leads (the primaries capability): without it a "leader" is any node.
    """

    name: str
    what: str
    package: str
    targets: tuple[str, ...]
    leader: bool = False


CLASSICS: tuple[Classic, ...] = (
    Classic("kill-leader", "kill and restart the leader", "kill", ("leader",), leader=True),
    Classic("kill-follower", "kill and restart one follower", "kill", ("follower",)),
    Classic("kill-all", "kill and restart the whole cluster", "kill", ("all",)),
    Classic("power-loss-all", "a power loss of the whole cluster: what no node synced is lost", "lose-unsynced",
            ("all",)),
    Classic("partition-leader", "the leader cut off from the other nodes (clients still reach it)", "partition",
            ("leader-deposed", "leader-alone", "leader"), leader=True),
    Classic("partition-follower", "one follower cut off from the other nodes (clients still reach it)", "partition",
            ("follower",)),
    Classic("partition-minority", "a minority of the nodes cut off from the majority", "partition", ("minority",)),
    Classic("pause-leader", "pause the leader (SIGSTOP), then resume it", "pause", ("leader",), leader=True),
    Classic("pause-follower", "pause one follower, then resume it", "pause", ("follower",)),
    Classic("clock-jump", "one node's wall clock jumps ahead or behind", "clock", ("bump",)),
    Classic("clock-strobe", "one node's wall clock flips back and forth", "clock", ("strobe",)),
    Classic("membership-change", "a membership change, of a kind the system offers", "membership", ()),
)
"""Every classic, in the order the plan and the report list them (a run's windows take them in an order drawn
from its seed)."""


@dataclass(frozen=True)
class Offered:
    """A classic the run can do: the package and target its window uses (target None: drawn by weight)."""

    classic: str
    package: str
    target: str | None

    def to_dict(self) -> dict[str, Any]:
        """As ``test.json`` records it."""
        return {"classic": self.classic, "package": self.package, "target": self.target}


@dataclass(frozen=True)
class Resolved:
    """What the run's packages make of the classics."""

    offered: list[Offered]
    not_offered: dict[str, str]
    """Classic name -> why the run cannot do it."""

    def to_dict(self) -> dict[str, Any]:
        """``extra["classics"]`` as ``test.json`` records it."""
        return {"offered": [o.to_dict() for o in self.offered],
                "not_offered": [{"classic": n, "why": w} for n, w in self.not_offered.items()]}


def resolve(packages: Mapping[str, Nemesis], capabilities: frozenset[str],
            missing: Mapping[str, str] | None = None) -> Resolved:
    """The classics the run's ``packages`` (the default campaign's, by name) can do, and why not the others.

    Args:
        packages: the campaign's fault packages; a package's default-campaign targets are its ``mix_targets``
            when it has them, else its ``targets()``.
        capabilities: the run's capabilities (the system's, less what the backend cannot do).
        missing: why each package not in ``packages`` is not in the campaign (package name -> reason).
    """
    missing = missing or {}
    offered: list[Offered] = []
    not_offered: dict[str, str] = {}
    for c in CLASSICS:
        package = packages.get(c.package)
        if package is None:
            not_offered[c.name] = missing.get(c.package, f"the campaign has no {c.package} package")
            continue
        if c.leader and PRIMARIES not in capabilities:
            not_offered[c.name] = "the system does not say who leads (it offers no primaries capability)"
            continue
        own = campaign_targets(package)
        if not c.targets:
            offered.append(Offered(c.name, c.package, None))
            continue
        target = next((t for t in c.targets if t in own), None)
        if target is None:
            not_offered[c.name] = (f"the {c.package} package offers no {' or '.join(c.targets)} target (it offers "
                                   f"{', '.join(own) or 'none'})")
            continue
        offered.append(Offered(c.name, c.package, target))
    return Resolved(offered, not_offered)


def campaign_targets(package: Nemesis) -> list[str]:
    """The targets ``package`` offers the default campaign: its ``mix_targets``, else its ``targets()``."""
    return list(getattr(package, "mix_targets", None) or package.targets())


def from_extra(extra: Mapping[str, Any]) -> list[Offered]:
    """The offered classics a config's ``extra["classics"]`` records (none when it records none)."""
    record = extra.get("classics") or {}
    return [Offered(str(o["classic"]), str(o["package"]), None if o.get("target") is None else str(o["target"]))
            for o in record.get("offered", []) if isinstance(o, Mapping)]


def why_left_out(package: str, needs: frozenset[str], capabilities: frozenset[str], system: object,
                 backend: Any) -> str:
    """Why the default campaign of ``system`` on ``backend`` has no ``package`` (which ``needs`` capabilities the
    run's ``capabilities`` lack), in words: the system does not offer one (with its own reason, where it gives
    one: :class:`harness.plugin_api.ExplainsGaps`), or the backend cannot carry it out."""
    lacking = sorted(needs - capabilities)
    if not lacking:
        return f"the campaign has no {package} package"
    cap = lacking[0]
    if cap in getattr(system, "capabilities", frozenset()):
        why = backend.unavailable(cap) if hasattr(backend, "unavailable") else None
        return f"the {getattr(backend, 'name', 'chosen')} backend does not carry out the {cap} capability" + (
            f": {why}" if why else "")
    why = system.not_offered.get(cap) if isinstance(system, ExplainsGaps) else None
    return f"system {getattr(system, 'name', '?')} does not offer the {cap} capability" + (f": {why}" if why else "")


def rows(extra: Mapping[str, Any], windows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per classic for the plan and the report, in :data:`CLASSICS` order, from a config's ``extra``
    (what :func:`resolve` recorded) and its schedule's ``windows`` (as ``schedule.json`` holds them): ``classic``,
    ``what``, ``status`` (``planned``, ``left out`` or ``not offered``), and for a planned one its first
    window's ``at``, ``package`` and ``target``, for the others ``why``. Empty for a run that recorded no
    classics (not a default campaign, or one from before them)."""
    record = extra.get("classics")
    if not isinstance(record, Mapping):
        return []
    offered = {o.classic: o for o in from_extra(extra)}
    not_offered = {str(d.get("classic")): str(d.get("why", "")) for d in record.get("not_offered", [])
                   if isinstance(d, Mapping)}
    first: dict[str, Mapping[str, Any]] = {}
    for w in sorted(windows, key=lambda w: float(w.get("at", 0.0))):
        name = w.get("classic")
        if isinstance(name, str):
            first.setdefault(name, w)
    out: list[dict[str, Any]] = []
    for c in CLASSICS:
        row: dict[str, Any] = {"classic": c.name, "what": c.what}
        if c.name in first:
            w = first[c.name]
            row |= {"status": "planned", "at": w.get("at"), "package": w.get("package"), "target": w.get("target")}
        elif c.name in offered:
            row |= {"status": "left out", "package": offered[c.name].package, "target": offered[c.name].target,
                    "why": f"the run is too short (the classics take at most {CLASSIC_SHARE:.0%} of its windows)"}
        elif c.name in not_offered:
            row |= {"status": "not offered", "why": not_offered[c.name]}
        else:
            continue
        out.append(row)
    return out
