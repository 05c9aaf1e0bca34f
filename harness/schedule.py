"""The nemesis schedule: when each fault starts and stops, and how its targets are chosen.

It is computed up front from the seed alone, so the same seed gives the same schedule on every
backend. Targets that depend on the running system (such as "the leader") are resolved when the
fault starts, with a random generator seeded per fault, and recorded in the history.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from harness.protocols import FaultSpec


@dataclass(frozen=True)
class ScheduledFault:
    """One fault window: start ``at`` seconds into the test, stop ``duration`` seconds later."""

    at: float
    duration: float
    spec: FaultSpec
    seed: int
    """Seeds the random choices made when the fault starts (e.g. which random half)."""
    lane: int = 0
    """Windows of different lanes may overlap (the default mix's combined nemesis)."""
    trigger: str | None = None
    """A transition the window waits for before it strikes (:mod:`harness.transitions`), if any."""
    classic: str | None = None
    """The classic fault this window does (:mod:`harness.classics`), in a default campaign; None for any other."""

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready form, as schedule.json stores it."""
        out: dict[str, object] = {"at": self.at, "duration": self.duration, "package": self.spec.package,
                                  "target": self.spec.target, "seed": self.seed}
        if self.lane:
            out["lane"] = self.lane
        if self.trigger is not None:
            out["trigger"] = self.trigger
        if self.classic is not None:
            out["classic"] = self.classic
        return out


def nemesis_schedule(
    seed: int, targets: Mapping[str, Sequence[str]], time_limit: float, interval: float
) -> list[ScheduledFault]:
    """Alternate quiet gaps and fault windows until the time limit, one fault at a time.

    Args:
        seed: the test's seed.
        targets: each fault package's name and its target choices, e.g. ``{"kill": ["one", "leader"]}``.
        time_limit: seconds of the main phase; every window closes before it.
        interval: the mean length of gaps and windows, in seconds (each drawn from 0.5x to 1.5x).

    Returns:
        The windows in time order; empty when there are no packages.
    """
    if not targets or interval <= 0:
        return []
    rng = random.Random(f"fencepost-nemesis:{seed}")
    names = sorted(targets)
    schedule: list[ScheduledFault] = []
    t = rng.uniform(0.5, 1.5) * interval
    while True:
        duration = round(rng.uniform(0.5, 1.5) * interval, 3)
        if t + duration >= time_limit:
            break
        package = rng.choice(names)
        choices = list(targets[package]) or ["default"]
        spec = FaultSpec(package, rng.choice(choices))
        schedule.append(ScheduledFault(round(t, 3), duration, spec, rng.randrange(2**31)))
        t += duration + rng.uniform(0.5, 1.5) * interval
    return schedule
