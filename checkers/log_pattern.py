"""The log-pattern checker: crashes, tracebacks and ERROR lines in the nodes' logs (``<run>/nodes/*/``).

Each pattern is a regular expression matched per line (:data:`DEFAULT_PATTERNS`). By default a Python
traceback, a Go panic, a FATAL line and, from a JVM, an uncaught exception, a ``java.lang.*Error`` or a
``SEVERE`` line make the result invalid (a node crashed in a way its code did not plan for), and ERROR
lines are counted and shown but judge nothing: a node refusing a request during a partition may log
one. A system's plugin adds patterns of its own (:class:`harness.plugin_api.LogPatterns`). With no run
folder there are no logs to read, so the result is unknown.

Each match has its place, its text (a traceback's next lines, a JVM stack's ``at`` lines) and, where it
can be read, its time ``time_s`` in seconds since the run's time zero (``timing.json``): the timestamp of
its own line (:func:`line_time`), else of the nearest line above it with one, within
:data:`CONTEXT_LINES` (a stack's header, java.util.logging's two-line records). The earliest fatal match's
time is the result's ``first_anomaly_s``, its first evidence (:mod:`harness.detection`); a match with no
timestamp near it has no time and cannot be first evidence.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping, Sequence
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from harness.checker_protocol import UNKNOWN, CheckContext
from harness.history.op import Op
from harness.plugin_api import LogPatterns

DEFAULT_PATTERNS: dict[str, str] = {
    "traceback": r"^\s*Traceback \(most recent call last\):",
    "panic": r"^panic: |^fatal error: ",
    "fatal": r"\bFATAL\b|\bCRITICAL\b",
    "uncaught": r'^Exception in thread "[^"]*" \S|\bUncaught exception in thread\b',
    "jvm-error": r'^(?:\s*Caused by: |\s*Suppressed: |Exception in thread "[^"]*" |Exception: )?'
                 r"java\.lang\.(?:[a-z]\w*\.)*(?:[A-Z]\w*)?Error\b",
    "severe": r"\bSEVERE\b",
    "error": r"\bERROR\b",
}
"""The patterns every run gets, by name:

* ``traceback``: a Python traceback's first line (the match's text holds the next lines too).
* ``panic``: a Go panic, or the Go runtime's ``fatal error:``.
* ``fatal``: a line at level FATAL or CRITICAL.
* ``uncaught``: a JVM thread died of an exception: the default handler's ``Exception in thread "main"
  java.lang.IllegalStateException: ...`` at the start of a line, or a logged ``Uncaught exception in thread``.
* ``jvm-error``: a ``java.lang.*Error`` thrown (``OutOfMemoryError``, ``StackOverflowError``,
  ``NoClassDefFoundError``...: what Java says no reasonable program should catch), where a throwable is
  printed: at the start of a line, after ``Caused by:`` or ``Suppressed:``, or in an uncaught exception's
  line. A log line that only mentions one in its message does not match.
* ``severe``: a line at java.util.logging's top level, SEVERE.
* ``error``: a line at level ERROR; not fatal. A handled exception logged at WARN or INFO matches nothing.
"""
DEFAULT_FATAL = frozenset({"traceback", "panic", "fatal", "uncaught", "jvm-error", "severe"})
MAX_MATCHES = 20
CONTEXT_LINES = 8
LOG_SUFFIXES = (".log", ".txt", ".out", ".err")
STACK_LINE = re.compile(r"^\s+at \S|^\s*Caused by: |^\s*Suppressed: |^\s+\.\.\. \d+ (?:more|common frames omitted)")
"""A JVM stack trace's continuation lines, kept as the text of the match above them."""
THROWN = re.compile(r"^(?:[a-z_$][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error|Throwable)\b")
"""A throwable's first line (``java.io.IOException: ...``), kept with the log line right above it."""
_ISO = re.compile(r"(?<!\d)(\d{4})[-/](\d{2})[-/](\d{2})[T ](\d{1,2}):(\d{2}):(\d{2})(?:[.,](\d{1,9}))?"
                  r"(Z|[+-]\d{2}:?\d{2})?(?!\d)")
_JUL = re.compile(r"\b(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) (\d{1,2}), (\d{4}) "
                  r"(\d{1,2}):(\d{2}):(\d{2}) ([AP]M)\b")
_MONTHS = {m: i + 1 for i, m in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct",
                                            "Nov", "Dec"))}
STAMP_WITHIN = 40
"""A timestamp counts only if it starts within this many characters of the line's start (not in a message)."""


def log_files(run_dir: Path) -> list[Path]:
    """The node log files under ``run_dir/nodes``, sorted (``*.log``, ``*.txt``, ``*.out``, ``*.err``)."""
    nodes = run_dir / "nodes"
    if not nodes.is_dir():
        return []
    return sorted(p for p in nodes.rglob("*") if p.is_file() and p.suffix in LOG_SUFFIXES)


def line_time(line: str) -> float | None:
    """The wall-clock time (Unix seconds) of ``line``'s timestamp, near its start; None when it has none.

    Read: ISO 8601 (``2026-12-01T17:45:09.123Z``, ``+01:00``), log4j's and logback's
    ``2026-12-01 17:45:09,123``, Go's ``2026/12/01 17:45:09.123456`` and java.util.logging's
    ``Dec 01, 2026 5:45:09 PM``. A time without a zone is this machine's local time.
    """
    found = [m for m in (_ISO.search(line), _JUL.search(line)) if m is not None and m.start() < STAMP_WITHIN]
    if not found:
        return None
    m = min(found, key=lambda m: m.start())
    try:
        if m.re is _JUL:
            mon, day, year, hour, minute, sec, half = m.groups()
            hour_24 = int(hour) % 12 + (12 if half == "PM" else 0)
            return datetime(int(year), _MONTHS[mon], int(day), hour_24, int(minute), int(sec)).timestamp()
        year, month, day, hour, minute, sec, frac, zone = m.groups()
        tz = None
        if zone == "Z":
            tz = UTC
        elif zone:
            sign = -1 if zone[0] == "-" else 1
            digits = zone[1:].replace(":", "")
            tz = timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:])))
        micros = int((frac or "0").ljust(6, "0")[:6])
        return datetime(int(year), int(month), int(day), int(hour), int(minute), int(sec), micros,
                        tzinfo=tz).timestamp()
    except ValueError:  # a date that does not exist
        return None


def run_start(run_dir: Path) -> float | None:
    """The wall-clock time of the run's time zero (``timing.json``'s ``start_wall_s``); None when not recorded."""
    try:
        return float(json.loads((run_dir / "timing.json").read_text())["start_wall_s"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _time_near(lines: Sequence[str], i: int) -> float | None:
    """The time of line ``i``, else of the nearest line above it with one, within :data:`CONTEXT_LINES`."""
    for j in range(i, max(-1, i - CONTEXT_LINES - 1), -1):
        t = line_time(lines[j])
        if t is not None:
            return t
    return None


def _stack_end(lines: Sequence[str], i: int) -> int:
    """The index after line ``i``'s stack: a throwable's first line right below it, then its stack lines."""
    j = i + 1
    if j < len(lines) and THROWN.match(lines[j]) and not STACK_LINE.match(lines[i]):
        j += 1
    while j < len(lines) and STACK_LINE.match(lines[j]):
        j += 1
    return j


def _compile(name: str, regex: str | re.Pattern[str]) -> re.Pattern[str]:
    try:
        return re.compile(regex)
    except re.error as e:
        raise ValueError(f"log pattern {name!r} is not a regular expression: {e}") from None


class LogPatternChecker:
    """Scans node logs for patterns; matches of a fatal pattern make the result invalid. A run's system adds
    its own patterns (:meth:`for_plugin`).

    Args:
        patterns: name -> regular expression; defaults to :data:`DEFAULT_PATTERNS`.
        fatal: the pattern names whose matches make the result invalid.
    """

    name = "log-pattern"

    def __init__(self, patterns: Mapping[str, str | re.Pattern[str]] | None = None,
                 fatal: Collection[str] | None = None) -> None:
        self.patterns = {k: _compile(k, v) for k, v in (patterns or DEFAULT_PATTERNS).items()}
        self.fatal = frozenset(DEFAULT_FATAL if fatal is None else fatal)

    def for_plugin(self, plugin: object) -> LogPatternChecker:
        """This checker with ``plugin``'s own patterns (:class:`harness.plugin_api.LogPatterns`) added; itself
        when it brings none. A name this checker has already takes the plugin's regex and its say on fatality.

        Raises:
            ValueError: a pattern is no regular expression, or a fatal name is no pattern's.
        """
        if not isinstance(plugin, LogPatterns):
            return self
        own = {k: _compile(k, v) for k, v in plugin.log_patterns().items()}
        fatal = (self.fatal - own.keys()) | frozenset(plugin.fatal_log_patterns())
        patterns = {**self.patterns, **own}
        if unknown := sorted(fatal - patterns.keys()):
            raise ValueError(f"fatal log patterns that name no pattern: {', '.join(unknown)}")
        return LogPatternChecker(patterns, fatal)

    def _for_run(self, ctx: CheckContext) -> tuple[LogPatternChecker, list[str]]:
        """This checker with the run's system's patterns (the run's own plugin, else the system its test
        names, loaded), and a note when the system could not be loaded."""
        system = ctx.test.get("system")
        plugin = ctx.system
        if plugin is None:
            if not system or not isinstance(system, str):
                return self, []
            from harness.registry import load_system

            try:
                plugin = load_system(system)
            except Exception as e:
                return self, [f"system {system!r} could not be loaded ({type(e).__name__}: {e}): "
                              "its own log patterns, if any, were not used"]
        try:
            return self.for_plugin(plugin), []
        except ValueError as e:  # the plugin's mistake: the result is unknown, with this error
            raise ValueError(f"system {system!r}: {e}") from None

    def check(self, history: Sequence[Op], ctx: CheckContext) -> dict[str, Any]:
        """Scan every node log, with the run's system's own patterns too; see the class docstring for validity."""
        if ctx.run_dir is None:
            return {"valid": UNKNOWN, "explanation": "No run folder, so there were no node logs to scan."}
        checker, notes = self._for_run(ctx)
        run_dir = Path(ctx.run_dir)
        start = run_start(run_dir)
        result = checker._scan(run_dir, start)
        if start is None and result["matches"]:
            notes.append("no timing.json (the run's wall-clock start), so matches have no times")
        if notes:
            result["notes"] = notes
        return result

    def _scan(self, run_dir: Path, start: float | None) -> dict[str, Any]:
        files = log_files(run_dir)
        counts = dict.fromkeys(self.patterns, 0)
        order = sorted(self.patterns.items(), key=lambda kv: kv[0] not in self.fatal)  # a fatal match wins a line
        matches: list[dict[str, Any]] = []
        first: float | None = None
        for path in files:
            with open(path, encoding="utf-8", errors="replace") as fh:
                lines = fh.read().splitlines()
            i = 0
            while i < len(lines):
                name = next((k for k, rx in order if rx.search(lines[i])), None)
                if name is None:
                    i += 1
                    continue
                counts[name] += 1
                end = _stack_end(lines, i)
                keep = len(matches) < MAX_MATCHES and (name in self.fatal or len(matches) < MAX_MATCHES // 2)
                wall = _time_near(lines, i) if start is not None and (keep or name in self.fatal) else None
                time_s = None if wall is None or start is None else round(wall - start, 3)
                if name in self.fatal and time_s is not None and (first is None or time_s < first):
                    first = time_s
                if keep:
                    last = i + CONTEXT_LINES if name == "traceback" else min(end, i + CONTEXT_LINES)
                    match = {"pattern": name, "file": path.relative_to(run_dir).as_posix(), "line": i + 1,
                             "text": "\n".join(lines[i:last])}
                    if time_s is not None:
                        match["time_s"] = time_s
                    matches.append(match)
                i = end if name in self.fatal else i + 1  # a fatal match's stack is its own, not new matches
        bad = {k: n for k, n in counts.items() if n and k in self.fatal}
        found = ", ".join(f"{n} {k}" for k, n in counts.items() if n) or "nothing"
        result: dict[str, Any] = {"valid": not bad, "files": len(files), "counts": counts, "matches": matches,
                                  "summary": f"{len(files)} log file{'s' if len(files) != 1 else ''}: {found}"}
        if bad:
            result["explanation"] = "Node logs show crashes: " + ", ".join(
                f"{n} {k} line{'s' if n != 1 else ''}" for k, n in bad.items()) + "."
            if first is not None:
                result["first_anomaly_s"] = max(0.0, first)
        return result
