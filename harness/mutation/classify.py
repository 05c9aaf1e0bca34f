"""What became of a mutant: caught, missed, broken at start, unknown, or equivalent.

From the runs of the campaign (the system's default campaign, or the ``--nemesis`` given):

- **caught**: some run exited 1 (a checker found an anomaly);
- **broken**: every run ended before the workload (exit 3 before any client operation, or no client
  operation in the history): the mutant breaks the system's start, which no campaign needs to catch;
- **missed**: every run exited 0;
- **unknown**: anything else (exit 2, an error after the workload started, a run stopped at its
  deadline, or a mix of passed and broken runs);
- **equivalent**: reviewed and listed in the system's equivalents file (:mod:`.equivalents`); not run.

The mutation score is caught / (caught + missed + unknown): equivalent and broken mutants count
neither way. Runs under one fault package alone (``--per-package``) measure detection power only;
they never change a mutant's class.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.mutation.mutants import Mutant
from harness.mutation.runner import BROKEN as BROKEN_RUN
from harness.mutation.runner import CAUGHT as CAUGHT_RUN
from harness.mutation.runner import PASSED, RunResult

CAUGHT, MISSED, UNKNOWN, BROKEN, EQUIVALENT = "caught", "missed", "unknown", "broken", "equivalent"
STATUSES = (CAUGHT, MISSED, UNKNOWN, BROKEN, EQUIVALENT)
SCORED = (CAUGHT, MISSED, UNKNOWN)
"""The classes the score counts (its denominator); caught is its numerator."""


def _run_words(r: RunResult) -> str:
    code = "stopped at its deadline" if r.exit_code is None else f"exit {r.exit_code}"
    return f"seed {r.seed}: {code}, {r.client_ops} client ops"


def classify(runs: Sequence[RunResult]) -> tuple[str, str]:
    """``(class, why)`` of a mutant from its campaign's runs (``why`` is empty for caught and missed)."""
    if not runs:
        return UNKNOWN, "no run"
    outcomes = [r.outcome for r in runs]
    if CAUGHT_RUN in outcomes:
        return CAUGHT, ""
    if all(o == PASSED for o in outcomes):
        return MISSED, ""
    why = "; ".join(f"{_run_words(r)} ({r.outcome})" for r in runs)
    if all(o == BROKEN_RUN for o in outcomes):
        return BROKEN, why
    return UNKNOWN, why


@dataclass
class MutantResult:
    """A mutant, its class and why, its diff, and its runs (the campaign's, then each package's)."""

    mutant: Mutant
    status: str
    reason: str = ""
    diff: str = ""
    runs: list[RunResult] = field(default_factory=list)

    @property
    def campaign_runs(self) -> list[RunResult]:
        """The runs of the campaign as given (not the single-package ones)."""
        return [r for r in self.runs if r.package is None]

    def caught_within(self, seconds: float, package: str | None = None) -> bool:
        """Whether a run of the campaign (``package`` None) or of ``package`` alone caught it with the
        first evidence at most ``seconds`` of test time in."""
        return any(r.caught_within(seconds) for r in self.runs if r.package == package)

    def caught_by(self, package: str | None = None) -> bool:
        """Whether a run of the campaign (``package`` None) or of ``package`` alone caught it at all."""
        return any(r.outcome == CAUGHT_RUN for r in self.runs if r.package == package)

    def faults(self) -> dict[str, int]:
        """The fault actions the campaign's runs started, by package, summed over its runs."""
        total: dict[str, int] = {}
        for r in self.campaign_runs:
            for name, n in r.faults.items():
                total[name] = total.get(name, 0) + n
        return dict(sorted(total.items(), key=lambda kv: (-kv[1], kv[0])))

    def first_anomaly_s(self) -> float | None:
        """The earliest first evidence among the campaign's catching runs."""
        times = [r.first_anomaly_s for r in self.campaign_runs
                 if r.outcome == CAUGHT_RUN and r.first_anomaly_s is not None]
        return min(times) if times else None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: the mutant's fields and id, its class, why, diff, faults and runs."""
        return {**self.mutant.as_dict(), "status": self.status, "reason": self.reason, "diff": self.diff,
                "faults": self.faults(), "first_anomaly_s": self.first_anomaly_s(),
                "runs": [r.as_dict() for r in self.runs]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MutantResult:
        """Read one back from :meth:`as_dict`'s form."""
        mutant = Mutant(data["module"], data["operator"], data["occurrence"], data["line"], data["original"],
                        data["mutated"])
        return cls(mutant, data["status"], data.get("reason", ""), data.get("diff", ""),
                   [RunResult.from_dict(r) for r in data.get("runs", [])])
