"""Cost in advance: each partition's shape, and an estimate of the search it will take.

For each partition (or, where the search splits a partition by key, each key in it) the estimate
looks at three numbers: ``n``, the ops with a known or unknown outcome (fail ops aside); ``c``, the
largest number of definite ops open at one instant (the concurrency); and ``k``, the info ops. The
search steps are then estimated as ``10 ** (A + B * log10(n) + C * c + D * k)``, and the seconds as
steps times :data:`SECONDS_PER_STEP`. The coefficients were fitted by least squares on the steps the
search took (``fencepost bench checker --suite calibrate`` refits them and prints the error): every
partition of Porcupine's 108 histories, the kv histories checked as one unsplit partition, and
generated single-key cas-register histories of 5 to 40 processes with 0 to 20% info ops. On those,
the estimate is within a factor of about 2 for half the partitions and of about 10 for nine in ten:
an order of magnitude, which is what a user needs to know before a long check.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import repeat
from operator import sub
from typing import Any

from checkers.models.base import Partition
from harness.history.op import Call, OpType

A, B, C, D = -0.336, 1.174, 0.0946, 0.0137
"""The fitted coefficients (see the module; refit with ``fencepost bench checker --suite calibrate``)."""
SECONDS_PER_STEP = 2e-6
"""Wall time of one search step on the calibration machine (2 cores): the median was 1.2 to 3 us
between a quiet and a loaded machine; a kv step, which asks the model for guidance, takes more."""
MAX_EXPONENT = 15.0
"""Estimates are capped at 10**15 steps: beyond that only "hard" means anything."""
LONG_CHECK = 5.0
"""Estimated seconds from which a file's plan is printed before it is checked."""


@dataclass(slots=True)
class Shape:
    """The numbers the estimate is made of, for one partition.

    Attributes:
        label: the partition's key.
        ops: ops with an ok or info outcome (fail ops aside).
        concurrency: the largest number of definite ops open at once (in one key, when split).
        info: info ops.
        keys: keys searched apart (1 unless a split partition holds several).
        steps: estimated search steps.
    """

    label: Any
    ops: int
    concurrency: int
    info: int
    keys: int
    steps: float

    @property
    def seconds(self) -> float:
        """Estimated seconds."""
        return self.steps * SECONDS_PER_STEP


def estimate_steps(ops: int, concurrency: int, info: int) -> float:
    """Estimated search steps for one independent part of ``ops`` ops."""
    if ops <= 0:
        return 0.0
    exponent = A + B * math.log10(ops) + C * concurrency + D * info
    return float(10 ** min(exponent, MAX_EXPONENT))


def measure(calls: Sequence[Call]) -> tuple[int, int, int]:
    """``(ops, concurrency, info)`` of ``calls``."""
    ok = OpType.OK
    done = [c for c in calls if c.outcome is ok]
    info = sum(1 for c in calls if c.outcome is OpType.INFO)
    starts = sorted([c.invoke.index for c in done])
    ends = sorted([c.complete.index for c in done])  # type: ignore[union-attr]
    # Ops open when the k-th one starts: k + 1 started, minus those already ended.
    most = max(map(sub, range(1, len(starts) + 1), map(bisect_left, repeat(ends), starts)), default=0)
    return len(done) + info, most, info


def shape(part: Partition, *, split: bool = True) -> Shape:
    """The shape and estimate of one partition; with ``split``, each key is estimated apart and summed."""
    groups: dict[Any, Sequence[Call]] = {}
    if split and part.label is None:  # a partition with a label is one key already
        for c in part.calls:
            groups.setdefault(c.key, []).append(c)  # type: ignore[attr-defined]
    else:
        groups[part.label] = part.calls
    ops = most = info = 0
    steps = 0.0
    for calls in groups.values():
        o, conc, i = measure(calls)
        ops, most, info = ops + o, max(most, conc), info + i
        steps += estimate_steps(o, conc, i)
    if not split:
        most = measure(part.calls)[1]
    return Shape(part.label, ops, most, info, len(groups), steps)


@dataclass(slots=True)
class FilePlan:
    """What checking one file will take, before it starts.

    Attributes:
        partitions: partitions to check.
        concurrency: the largest concurrency over all partitions.
        info_max: the most info ops in one partition.
        info_total: info ops over all partitions.
        seconds: estimated seconds of search over all partitions.
        hardest: the partitions with the highest estimates, hardest first (up to three).
        estimates: each partition's estimated seconds, by key (drives the progress bar's ETA).
        exact: False for a file checked in shares (:mod:`checkers.linearizability.sharded`), whose
            partitions are only counted before the check: the other figures are not computed.
    """

    partitions: int
    concurrency: int
    info_max: int
    info_total: int
    seconds: float
    hardest: list[Shape] = field(default_factory=list)
    estimates: dict[Any, float] = field(default_factory=dict)
    exact: bool = True

    @property
    def difficulty(self) -> str:
        """``easy`` (under a second), ``moderate`` (under a minute) or ``hard``."""
        if self.seconds < 1:
            return "easy"
        return "moderate" if self.seconds < 60 else "hard"

    def line(self, path: str) -> str:
        """One line for a person: partitions, concurrency, info ops, difficulty."""
        if not self.exact:
            return (f"{path}: {self.partitions} partitions, checked in shares, one process per core "
                    f"(concurrency, info ops and difficulty are not estimated for such files)")
        per = (f"info ops per partition: max {self.info_max}, {self.info_total / max(1, self.partitions):.1f} "
               f"on average" if self.info_total else "no info ops")
        hard = self.hardest[0] if self.hardest else None
        where = ""
        if hard is not None and self.partitions > 1:
            where = f"; hardest key {hard.label!r} ({hard.ops} ops, concurrency {hard.concurrency}, {hard.info} info)"
        return (f"{path}: {self.partitions} partition{'s' if self.partitions != 1 else ''}, largest concurrency "
                f"{self.concurrency}, {per}; difficulty {self.difficulty} (estimate {_seconds(self.seconds)}, "
                f"within about 10x){where}")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready figures."""
        return {"partitions": self.partitions, "concurrency": self.concurrency, "info_max": self.info_max,
                "info_total": self.info_total, "estimate_seconds": round(self.seconds, 3),
                "difficulty": self.difficulty}


def plan(parts: Sequence[Partition], *, split: bool = True) -> FilePlan:
    """The plan for checking ``parts``."""
    shapes = [shape(p, split=split) for p in parts]
    hardest = sorted(shapes, key=lambda s: -s.steps)[:3]
    return FilePlan(len(shapes), max((s.concurrency for s in shapes), default=0),
                    max((s.info for s in shapes), default=0), sum(s.info for s in shapes),
                    sum(s.seconds for s in shapes), hardest, {_hashable(s.label): s.seconds for s in shapes})


def _hashable(label: Any) -> Any:
    try:
        hash(label)
    except TypeError:
        return repr(label)
    return label


def _seconds(seconds: float) -> str:
    if seconds < 0.01:
        return "under 0.01 s"
    if seconds < 120:
        return f"~{seconds:.2g} s"
    if seconds < 7200:
        return f"~{seconds / 60:.0f} min"
    if seconds < 86400 * 3:
        return f"~{seconds / 3600:.0f} h"
    return f"~{seconds / 86400:.2g} days"
