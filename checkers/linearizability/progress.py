"""What a check reports while it runs: a plan per file, then each partition as soon as it is decided.

:class:`CheckEvents` is the extension point (the file driver calls it, from every process it uses);
:class:`ConsoleEvents` is what ``fencepost check`` shows: the plan of a long file (or every file with
``--plan``) on stderr before it is checked, one JSON line per decided partition on stdout with
``--json`` (so the first violation is known as soon as it is found), and a rich progress bar on
stderr with the partitions decided, valid, invalid and unknown, and an ETA from the estimates.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any, Protocol

from checkers.linearizability.estimate import LONG_CHECK, FilePlan

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

    from checkers.linearizability.checker import PartitionVerdict


class CheckEvents(Protocol):
    """Receives a check's events as they happen (all from the parent process).

    An events object may also say which events it wants, so that no process computes or sends the
    others: ``wants_partitions`` (a bool, default True) and ``wants_plan(plan)`` (default True).
    """

    def planned(self, path: str, plan: FilePlan) -> None:
        """``path``'s partitions have been found and estimated; none is checked yet."""
        ...

    def decided(self, path: str, partition: dict[str, Any]) -> None:
        """One partition of ``path`` has its verdict (a :func:`partition_record`)."""
        ...


def partition_record(verdict: PartitionVerdict) -> dict[str, Any]:
    """A decided partition as JSON-ready data: key, valid, method, ops, steps, seconds (and reason)."""
    out: dict[str, Any] = {"key": verdict.label, "valid": verdict.valid, "method": verdict.method,
                           "ops": verdict.ops, "steps": verdict.nodes, "seconds": round(verdict.seconds, 4)}
    if verdict.reason:
        out["reason"] = verdict.reason
    return out


class ConsoleEvents:
    """``fencepost check``'s view of the events.

    Args:
        stream_json: print one JSON line per decided partition on stdout.
        plans: print every file's plan (True), only those estimated at :data:`LONG_CHECK` seconds or
            more (None), or none (False).
        progress: show the progress bar (on stderr).
    """

    def __init__(self, *, stream_json: bool = False, plans: bool | None = None, progress: bool = False) -> None:
        self.stream_json = stream_json
        self.plans = plans
        self.counts = {"decided": 0, "valid": 0, "invalid": 0, "unknown": 0}
        self.partitions = 0
        self._estimates: dict[str, FilePlan] = {}
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        if progress:
            self._start_progress()

    @property
    def wants_partitions(self) -> bool:
        """Decided partitions are shown only as JSON lines or on the progress bar."""
        return self.stream_json or self._progress is not None

    def wants_plan(self, plan: FilePlan) -> bool:
        """Plans are shown when asked for or long, and feed the progress bar."""
        return bool(self.plans or self._progress is not None or (self.plans is None and plan.seconds >= LONG_CHECK))

    def _start_progress(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

        self._progress = Progress(TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(),
                                  TextColumn("ETA"), TimeRemainingColumn(), console=Console(stderr=True),
                                  transient=True)
        self._task = self._progress.add_task(self._describe(), total=None)
        self._progress.start()

    def _describe(self) -> str:
        c = self.counts
        return (f"decided {c['decided']}/{self.partitions}: {c['valid']} valid, {c['invalid']} invalid, "
                f"{c['unknown']} unknown")

    def _err(self, text: str) -> None:
        if self._progress is not None:
            self._progress.console.print(text, markup=False, highlight=False, soft_wrap=True)
        else:
            print(text, file=sys.stderr, flush=True)

    def planned(self, path: str, plan: FilePlan) -> None:
        """Print the plan when asked for or long; grow the progress bar's total."""
        self._estimates[path] = plan
        self.partitions += plan.partitions
        if self.plans or (self.plans is None and plan.seconds >= LONG_CHECK):
            self._err(f"fencepost: plan: {plan.line(path)}")
        if self._progress is not None and self._task is not None:
            task = self._progress.tasks[0]
            total = (task.total or 0.0) + sum(max(s, 1e-4) for s in plan.estimates.values())
            self._progress.update(self._task, total=total, description=self._describe())

    def decided(self, path: str, partition: dict[str, Any]) -> None:
        """Count the partition, stream it as JSON, move the bar by its estimate."""
        valid = partition["valid"]
        self.counts["decided"] += 1
        self.counts["valid" if valid is True else "invalid" if valid is False else "unknown"] += 1
        if self.stream_json:
            print(json.dumps({"event": "partition", "path": path, **partition}, default=str), flush=True)
        if self._progress is not None and self._task is not None:
            plan = self._estimates.get(path)
            step = 0.0
            if plan is not None:
                key = partition["key"]
                try:
                    step = max(plan.estimates.get(key, 0.0), 1e-4)
                except TypeError:
                    step = max(plan.estimates.get(repr(key), 0.0), 1e-4)
            self._progress.update(self._task, advance=step, description=self._describe())

    def close(self) -> None:
        """Take the progress bar down."""
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
