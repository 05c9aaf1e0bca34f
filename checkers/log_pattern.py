"""The log-pattern checker: tracebacks and ERROR lines in the nodes' logs (``<run>/nodes/*/``).

Each pattern is a regular expression matched per line. By default a Python traceback, a Go panic or
a FATAL line makes the result invalid (a node crashed in a way its code did not plan for), and ERROR
lines are counted and shown but judge nothing: a node refusing a request during a partition may log
one. With no run folder there are no logs to read, so the result is unknown.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.checker_protocol import UNKNOWN, CheckContext
from harness.history.op import Op

DEFAULT_PATTERNS: dict[str, str] = {
    "traceback": r"^\s*Traceback \(most recent call last\):",
    "panic": r"^panic: |^fatal error: ",
    "fatal": r"\bFATAL\b|\bCRITICAL\b",
    "error": r"\bERROR\b",
}
DEFAULT_FATAL = frozenset({"traceback", "panic", "fatal"})
MAX_MATCHES = 20
CONTEXT_LINES = 8
LOG_SUFFIXES = (".log", ".txt", ".out", ".err")


def log_files(run_dir: Path) -> list[Path]:
    """The node log files under ``run_dir/nodes``, sorted (``*.log``, ``*.txt``, ``*.out``, ``*.err``)."""
    nodes = run_dir / "nodes"
    if not nodes.is_dir():
        return []
    return sorted(p for p in nodes.rglob("*") if p.is_file() and p.suffix in LOG_SUFFIXES)


class LogPatternChecker:
    """Scans node logs for patterns; matches of a fatal pattern make the result invalid.

    Args:
        patterns: name -> regular expression; defaults to :data:`DEFAULT_PATTERNS`.
        fatal: the pattern names whose matches make the result invalid.
    """

    name = "log-pattern"

    def __init__(self, patterns: Mapping[str, str] | None = None, fatal: Sequence[str] | None = None) -> None:
        self.patterns = {k: re.compile(v) for k, v in (patterns or DEFAULT_PATTERNS).items()}
        self.fatal = frozenset(DEFAULT_FATAL if fatal is None else fatal)

    def check(self, history: Sequence[Op], ctx: CheckContext) -> dict[str, Any]:
        """Scan every node log; see the class docstring for validity."""
        if ctx.run_dir is None:
            return {"valid": UNKNOWN, "explanation": "No run folder, so there were no node logs to scan."}
        run_dir = Path(ctx.run_dir)
        files = log_files(run_dir)
        counts = dict.fromkeys(self.patterns, 0)
        matches: list[dict[str, Any]] = []
        for path in files:
            with open(path, encoding="utf-8", errors="replace") as fh:
                lines = fh.read().splitlines()
            for i, line in enumerate(lines):
                for name, rx in self.patterns.items():
                    if rx.search(line):
                        counts[name] += 1
                        if len(matches) < MAX_MATCHES and (name in self.fatal or len(matches) < MAX_MATCHES // 2):
                            matches.append({
                                "pattern": name, "file": path.relative_to(run_dir).as_posix(), "line": i + 1,
                                "text": "\n".join(lines[i:i + (CONTEXT_LINES if name == "traceback" else 1)]),
                            })
                        break
        bad = {k: n for k, n in counts.items() if n and k in self.fatal}
        found = ", ".join(f"{n} {k}" for k, n in counts.items() if n) or "nothing"
        result: dict[str, Any] = {"valid": not bad, "files": len(files), "counts": counts, "matches": matches,
                                  "summary": f"{len(files)} log file{'s' if len(files) != 1 else ''}: {found}"}
        if bad:
            result["explanation"] = "Node logs show crashes: " + ", ".join(
                f"{n} {k} line{'s' if n != 1 else ''}" for k, n in bad.items()) + "."
        return result
