"""The default campaign: every fault a run can do, overlapping, aimed where protocols break.

``fencepost test`` without ``--nemesis`` composes every fault package the run's system and backend can
carry out (Jepsen's combined nemesis) instead of naming one. Its schedule, computed from the seed alone
like any other, differs from a single fault's in three ways:

- **Overlap.** Windows come in ``LANES`` lanes that run side by side, so a kill can land during a
  partition, or a wipe during a membership change; one package is never in two windows at once. Each
  window starts at its planned time, even while an earlier window of its lane is still starting
  (:func:`harness.nemesis_runner.run_schedule`'s ``keep_time``), so the run follows the plan.
- **Weighted targets.** The targets that matter most come up most: the leader (killed or paused
  together with the control plane, or cut off from it), a majority, and the whole cluster at once
  (every node killed, every node's power lost). A package may weigh its own targets (a ``weights``
  mapping) and offer the mix more than its recipes pick from (``mix_targets``).
- **Dealt, not drawn.** Weights are shares, dealt as a weighted fair queue deals turns (:func:`deal`):
  each window goes to the free package whose next window would finish first at its weight's rate, the
  seed breaking ties by weight (its target is still drawn by weight: most packages have one or two
  windows a run, and a dealt target would be the same heaviest one at every seed). Each package gets its share
  of a run without the gaps of chance: drawn at random, a 120 s run often left a package of weight 2
  out, or gave it one window, and a 60 s run left several packages out, sometimes both faults that swap
  a node, so that mutants of the swap path went uncaught. Dealt, every package of weight 2 or more has
  a window in 60 s, and every package in 120 s. (A first round of every package, blunt ones included,
  was tried and cost the seeded bugs their aimed windows.)
- **Aimed timing.** A share of the windows wait, when their time comes, for a transition of the
  system (:mod:`harness.transitions`): a leader change, an election, a reconfiguration, a copy, a
  follower falling behind; then they strike. Packages aimed at one protocol window (the reference
  system's failover, copy-failover, stalled-swap...) weigh more than blunt ones, since each opens a
  window that random faults rarely hit.

A system may also say how its default campaign runs (``default_settings``: the reference system uses
four nodes, so that faults needing a spare node can act).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from harness.plugin_api import Transitions
from harness.protocols import FaultSpec, Nemesis
from harness.schedule import ScheduledFault

if TYPE_CHECKING:
    from harness.backends.backend import Backend
    from harness.config import TestConfig
    from harness.plugin_api import SystemPlugin

LANES = 2
TRIGGER_SHARE = 0.35
"""The share of windows that wait for a transition before striking."""
TARGET_WEIGHTS: Mapping[str, float] = {"leader": 3.0, "leader-alone": 3.0, "leader+control": 3.0, "majority": 2.0,
                                       "all": 2.0, "minority": 1.0, "one": 1.0}
"""How much more often the targets that matter come up (1 for any target not named)."""
GENERIC_WEIGHT = 1.0
"""The weight of a generic package (one whose ``generic`` attribute is true: a fault of any system)."""
AIMED_WEIGHT = 2.0
"""The weight of every other package: it aims at one protocol window, which random faults rarely hit."""


def weighted(rng: random.Random, choices: Sequence[tuple[str, float]]) -> str:
    """One of ``choices`` with probability proportional to its weight."""
    total = sum(w for _, w in choices)
    pick = rng.uniform(0, total)
    for name, w in choices:
        pick -= w
        if pick <= 0:
            return name
    return choices[-1][0]


def deal(rng: random.Random, choices: Sequence[tuple[str, float]], dealt: Mapping[str, int]) -> str:
    """One of ``choices``, dealt as a weighted fair queue deals turns: the one whose next turn would finish
    first, ``(dealt[name] + 1) / weight``, ties drawn by weight. Over many turns each choice's share is its
    weight's, as when drawn at random, but without the gaps and runs of chance: a choice of weight ``w``
    among choices weighing ``total`` has its ``k``-th turn within the first ``k * total / w`` turns dealt
    (while every choice is offered)."""
    finish = {n: round((dealt.get(n, 0) + 1) / w, 9) for n, w in choices}
    first = min(finish.values())
    return weighted(rng, [(n, w) for n, w in choices if finish[n] == first])


def target_choices(package: Nemesis) -> list[tuple[str, float]]:
    """The package's targets with their weights (its own ``weights`` win over :data:`TARGET_WEIGHTS`).

    A package may offer the mix more targets than a recipe picks from (``mix_targets``), so that adding one
    leaves the recipes' schedules as they were.
    """
    own: Mapping[str, float] = getattr(package, "weights", None) or {}
    targets = getattr(package, "mix_targets", None) or package.targets()
    return [(t, float(own.get(t, TARGET_WEIGHTS.get(t, 1.0)))) for t in targets] or [("default", 1.0)]


def package_weight(name: str, package: Nemesis) -> float:
    """How often a package comes up: its own ``mix_weight`` if it has one, else by whether it is generic
    (its ``generic`` attribute) or aimed."""
    own = getattr(package, "mix_weight", None)
    if own is not None:
        return float(own)
    return GENERIC_WEIGHT if getattr(package, "generic", False) else AIMED_WEIGHT


def mixed_schedule(seed: int, packages: Mapping[str, Nemesis], time_limit: float, interval: float,
                   triggers: Sequence[str] = (), lanes: int = LANES) -> list[ScheduledFault]:
    """The default campaign's windows, from the seed alone.

    Args:
        seed: the test's seed.
        packages: the fault packages in the mix, by name.
        time_limit: seconds of the main phase; every window closes before it.
        interval: the mean length of a window; gaps are shorter, so lanes overlap.
        triggers: the transitions windows may wait for.
        lanes: how many windows may be open at once.
    """
    if not packages or interval <= 0:
        return []
    rng = random.Random(f"fencepost-mix:{seed}")
    names = sorted(packages)
    busy_until: dict[str, float] = {}
    dealt: Counter[str] = Counter()
    windows: list[ScheduledFault] = []
    clocks = [rng.uniform(0.3, 1.0) * interval * (lane + 1) / lanes for lane in range(lanes)]
    while True:
        lane = min(range(lanes), key=lambda i: clocks[i])
        t = clocks[lane]
        duration = round(rng.uniform(0.5, 1.5) * interval, 3)
        if t + duration >= time_limit:
            break
        free = [(n, package_weight(n, packages[n])) for n in names if busy_until.get(n, -1.0) <= t]
        if free:
            name = deal(rng, free, dealt)
            target = weighted(rng, target_choices(packages[name]))
            dealt[name] += 1
            trigger = rng.choice(list(triggers)) if triggers and rng.random() < TRIGGER_SHARE else None
            windows.append(ScheduledFault(round(t, 3), duration, FaultSpec(name, target), rng.randrange(2**31),
                                          lane, trigger))
            busy_until[name] = t + duration
        clocks[lane] = t + duration + rng.uniform(0.25, 1.0) * interval
    windows.sort(key=lambda w: (w.at, w.lane))
    return windows


def window_shares(packages: Mapping[str, Nemesis]) -> dict[tuple[str, str], float]:
    """Each (package, target)'s share of the default campaign's windows, when every package is free, as
    :func:`mixed_schedule` deals them over a long run: the package's weight over all packages' weights,
    times the target's weight over the package's. A run of fewer windows than the weights add up to (the
    reference system's 38, about 95 s) has not yet dealt the lightest packages their first turn: there they
    come up far less than their share, and the heavy ones more."""
    total = sum(package_weight(n, p) for n, p in packages.items())
    shares: dict[tuple[str, str], float] = {}
    for name, package in sorted(packages.items()):
        choices = target_choices(package)
        of_targets = sum(w for _, w in choices)
        for target, w in choices:
            shares[(name, target)] = package_weight(name, package) / total * w / of_targets
    return shares


def default_packages(available: Sequence[str], needs: Mapping[str, frozenset[str]],
                     offered: frozenset[str]) -> list[str]:
    """The packages whose needs the run offers: the default campaign's faults."""
    return sorted(n for n in available if needs[n] <= offered)


DEFAULT_INTERVAL = 3.0
"""The default campaign's mean window length, unless the command line gives one."""


def default_campaign(config: TestConfig, given: frozenset[str] = frozenset(), *, system: SystemPlugin | None = None,
                     backend: Backend | None = None) -> TestConfig:
    """``config`` turned into its system's default campaign: every fault package its run can do, the
    overlapping schedule, the transitions windows may wait for, and the system's own settings for it
    (``default_settings``) for every field not in ``given`` (those set on the command line). ``system`` and
    ``backend`` replace the installed ones the config names, as in :func:`harness.launch.prepare`.

    Raises:
        registry.Refused: the system or backend is unknown.
    """
    from harness import registry
    from harness.cluster import offered
    from harness.plugin_api import DefaultCampaign
    from harness.transitions import GENERIC

    system = system if system is not None else registry.load_system(config.system)
    backend = backend if backend is not None else registry.load_backend(config.backend)
    can = offered(system, backend)
    names = registry.nemesis_names(system)
    needs = {n: frozenset(getattr(registry.load_nemesis(n, system), "needs", ())) for n in names}
    if isinstance(system, DefaultCampaign):
        for key, value in system.default_settings().items():
            if key not in given:
                setattr(config, key, value)
    if "nemesis_interval" not in given:
        config.nemesis_interval = DEFAULT_INTERVAL
    config.nemesis = default_packages(names, needs, can)
    triggers = (list(GENERIC) if "primaries" in can else []) + (
        list(system.transitions()) if isinstance(system, Transitions) else [])
    config.extra = {**config.extra, "mix": "default", "triggers": triggers}
    config.name = f"{config.system}-{config.workload}-default" + (f"-bug-{'+'.join(config.bug)}" if config.bug else "")
    return config
