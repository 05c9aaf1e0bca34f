"""The default campaign: every fault a run can do, overlapping, aimed where protocols break.

``fencepost test`` without ``--nemesis`` composes every fault package the run's system and backend can
carry out (Jepsen's combined nemesis) instead of naming one. Its schedule, computed from the seed alone
like any other, differs from a single fault's in these ways:

- **Classics first.** The classic faults the run can do (:mod:`harness.classics`: the leader, a follower
  and the whole cluster killed, the power lost, the leader or a follower cut off, a minority split off,
  the leader or a follower paused, a clock jumped or strobed, the membership changed) take their windows
  before any other, spread over the run in an order drawn from the seed; the packages share the rest.

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
  a window in 60 s when no classics take windows, and in 90 s beside them; every package has one in
  120 s. A classic's window counts as a turn its package had, and of packages tied, a first turn goes
  before another's second. (A first round of every package, blunt ones included, was tried and cost the
  seeded bugs their aimed windows; the classics are twelve windows, not a round of every package.)
- **Aimed timing.** A share of the windows wait, when their time comes, for a transition of the
  system (:mod:`harness.transitions`): a leader change, an election, a reconfiguration, a copy, a
  follower falling behind; then they strike. Packages aimed at one protocol window (the reference
  system's failover, copy-failover, stalled-swap...) weigh more than blunt ones, since each opens a
  window that random faults rarely hit.

A system may also say how its default campaign runs (``default_settings``: the reference system uses
four nodes, so that faults needing a spare node can act); the workload shape, workers per node and their
rate, is the framework's (:mod:`harness.workload_shape`).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from harness.classics import CLASSIC_SHARE, Offered
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
    first, ``(dealt[name] + 1) / weight``; of those tied, the ones dealt fewest turns so far (a first turn
    before a heavy package's second), then drawn by weight. Over many turns each choice's share is its
    weight's, as when drawn at random, but without the gaps and runs of chance: a choice of weight ``w``
    among choices weighing ``total`` has its ``k``-th turn within the first ``k * total / w`` turns dealt
    (while every choice is offered)."""
    finish = {n: round((dealt.get(n, 0) + 1) / w, 9) for n, w in choices}
    first = min(finish.values())
    tied = [(n, w) for n, w in choices if finish[n] == first]
    fewest = min(dealt.get(n, 0) for n, _ in tied)
    return weighted(rng, [(n, w) for n, w in tied if dealt.get(n, 0) == fewest])


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
                   triggers: Sequence[str] = (), lanes: int = LANES,
                   classics: Sequence[Offered] = ()) -> list[ScheduledFault]:
    """The default campaign's windows, from the seed alone.

    The lanes' windows are laid out first (each lane's windows and gaps drawn in turn); then the classics
    take theirs, in an order drawn from the seed, spread evenly over the run's windows (at most
    :data:`CLASSIC_SHARE` of them); then every other window is dealt (:func:`deal`) among the packages free
    for its whole length, the classics' windows counting as turns their packages had.

    Args:
        seed: the test's seed.
        packages: the fault packages in the mix, by name.
        time_limit: seconds of the main phase; every window closes before it.
        interval: the mean length of a window; gaps are shorter, so lanes overlap.
        triggers: the transitions windows may wait for (a classic's window never waits).
        lanes: how many windows may be open at once.
        classics: the classics the run can do (:func:`harness.classics.resolve`); one whose package is not in
            ``packages`` is ignored.
    """
    if not packages or interval <= 0:
        return []
    rng = random.Random(f"fencepost-mix:{seed}")
    slots = _slots(rng, time_limit, interval, lanes)
    order = [c for c in classics if c.package in packages]
    rng.shuffle(order)
    busy: dict[str, list[tuple[float, float]]] = {}
    placed = _place_classics(order, slots, busy)
    names = sorted(packages)
    dealt: Counter[str] = Counter(c.package for c in placed.values())
    windows: list[ScheduledFault] = []
    for i, (t, duration, lane) in enumerate(slots):
        classic = placed.get(i)
        if classic is not None:
            target = classic.target or weighted(rng, target_choices(packages[classic.package]))
            windows.append(ScheduledFault(round(t, 3), duration, FaultSpec(classic.package, target),
                                          rng.randrange(2**31), lane, None, classic.classic))
            continue
        free = [(n, package_weight(n, packages[n])) for n in names if _free(busy, n, t, duration)]
        if not free:
            continue
        name = deal(rng, free, dealt)
        target = weighted(rng, target_choices(packages[name]))
        dealt[name] += 1
        trigger = rng.choice(list(triggers)) if triggers and rng.random() < TRIGGER_SHARE else None
        windows.append(ScheduledFault(round(t, 3), duration, FaultSpec(name, target), rng.randrange(2**31),
                                      lane, trigger))
        busy.setdefault(name, []).append((t, t + duration))
    windows.sort(key=lambda w: (w.at, w.lane))
    return windows


def _slots(rng: random.Random, time_limit: float, interval: float, lanes: int) -> list[tuple[float, float, int]]:
    """The run's windows as (start, length, lane), in start order: each lane a window, then a gap, in turn."""
    clocks = [rng.uniform(0.3, 1.0) * interval * (lane + 1) / lanes for lane in range(lanes)]
    slots: list[tuple[float, float, int]] = []
    while True:
        lane = min(range(lanes), key=lambda i: clocks[i])
        t = clocks[lane]
        duration = round(rng.uniform(0.5, 1.5) * interval, 3)
        if t + duration >= time_limit:
            break
        slots.append((t, duration, lane))
        clocks[lane] = t + duration + rng.uniform(0.25, 1.0) * interval
    slots.sort(key=lambda s: (s[0], s[2]))
    return slots


def _free(busy: Mapping[str, Sequence[tuple[float, float]]], name: str, t: float, duration: float) -> bool:
    """Whether package ``name`` has no window that meets ``[t, t + duration)``."""
    return all(end <= t or start >= t + duration for start, end in busy.get(name, ()))


def _place_classics(order: Sequence[Offered], slots: Sequence[tuple[float, float, int]],
                    busy: dict[str, list[tuple[float, float]]]) -> dict[int, Offered]:
    """Slot index -> the classic whose window it is. The ``k``-th classic (of as many as
    :data:`CLASSIC_SHARE` of the slots hold) is due at slot ``1 + k * (len(slots) - 2) / fit``: spread evenly,
    the first after the run's first window, the last with a window or two to spare. It takes the first slot
    from there where its package has no other window; a classic whose package is busy lets the next one in
    ``order`` go first. Records each placed window in ``busy``."""
    fit = min(len(order), int(CLASSIC_SHARE * len(slots)))
    pending = list(order)
    placed: dict[int, Offered] = {}
    for i, (t, duration, _) in enumerate(slots):
        if len(placed) >= fit or not pending:
            break
        if i < 1 + len(placed) * (len(slots) - 2) / fit:
            continue
        chosen = next((c for c in pending if _free(busy, c.package, t, duration)), None)
        if chosen is None:
            continue
        pending.remove(chosen)
        placed[i] = chosen
        busy.setdefault(chosen.package, []).append((t, t + duration))
    return placed


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
SHAPE_FIELDS = frozenset({"concurrency", "rate"})
"""The workload shape's fields: the framework sets them (:mod:`harness.workload_shape`), never a system's
``default_settings``."""


def default_campaign(config: TestConfig, given: frozenset[str] = frozenset(), *, system: SystemPlugin | None = None,
                     backend: Backend | None = None) -> TestConfig:
    """``config`` turned into its system's default campaign: every fault package its run can do, the
    classics it can do first (:mod:`harness.classics`, recorded with those it cannot in
    ``extra["classics"]``), the overlapping schedule, the transitions windows may wait for, the system's own
    settings for it (``default_settings``) and the workload shape (:mod:`harness.workload_shape`: workers
    per node and their rate, the same for every system) for every field not in ``given`` (those set on the
    command line). ``system`` and ``backend`` replace the installed ones the config names, as in
    :func:`harness.launch.prepare`.

    Raises:
        registry.Refused: the system or backend is unknown.
    """
    from harness import registry
    from harness.classics import resolve, why_left_out
    from harness.cluster import offered
    from harness.plugin_api import DefaultCampaign
    from harness.transitions import GENERIC
    from harness.workload_shape import default_rate, default_workers

    system = system if system is not None else registry.load_system(config.system)
    backend = backend if backend is not None else registry.load_backend(config.backend)
    can = offered(system, backend)
    names = registry.nemesis_names(system)
    loaded = {n: registry.load_nemesis(n, system) for n in names}
    needs = {n: frozenset(getattr(p, "needs", ())) for n, p in loaded.items()}
    if isinstance(system, DefaultCampaign):
        for key, value in system.default_settings().items():
            if key not in given and key not in SHAPE_FIELDS:
                setattr(config, key, value)
    if "concurrency" not in given:
        config.concurrency = default_workers(config.nodes)
    if "rate" not in given:
        config.rate = default_rate(config.concurrency)
    if "nemesis_interval" not in given:
        config.nemesis_interval = DEFAULT_INTERVAL
    config.nemesis = default_packages(names, needs, can)
    triggers = (list(GENERIC) if "primaries" in can else []) + (
        list(system.transitions()) if isinstance(system, Transitions) else [])
    missing = {n: why_left_out(n, needs[n], can, system, backend) for n in names if n not in config.nemesis}
    classics = resolve({n: loaded[n] for n in config.nemesis}, can, missing)
    config.extra = {**config.extra, "mix": "default", "triggers": triggers, "classics": classics.to_dict()}
    config.name = f"{config.system}-{config.workload}-default" + (f"-bug-{'+'.join(config.bug)}" if config.bug else "")
    return config
