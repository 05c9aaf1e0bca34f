"""Turn any checker's result, whatever its shape, into a card the report can show.

Every result gets the generic card: a verdict badge, the error and traceback of a crashed checker, the
plain-text ``explanation``, a table of per-key sub-results, a key/value table of the rest, and the
files it names (HTML pages embedded, images shown). Checkers Fencepost knows get a nicer body from
``templates/cards/<name>.html.j2``; if that body fails on a result of an unexpected shape, the generic
card is shown instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2

from reports.run_view import Verdict, verdict_of
from reports.templating import environment

SHOWN_ELSEWHERE = frozenset({"valid", "valid?", "error", "traceback", "explanation", "summary", "seconds", "html",
                             "plots"})
ARTIFACT_SUFFIXES = (".html", ".htm", ".png", ".svg", ".jpg", ".jpeg")
SPECIAL = {"stats", "exceptions", "perf", "availability", "log-pattern", "timeline", "txn"}
SEVERITY = {"invalid": 0, "unknown": 1, "unchecked": 2, "valid": 3}
PROBLEMS = frozenset({"invalid", "unknown"})


@dataclass
class Card:
    """One checker's result, ready to show.

    Attributes:
        name: the checker's name.
        verdict: valid, invalid or unknown.
        result: the raw result.
        error: a crashed checker's error line.
        traceback: a crashed checker's traceback.
        explanation: the checker's explanation in words.
        seconds: how long it ran.
        pages: HTML files it names, relative to the run folder.
        images: image files it names, relative to the run folder.
        sub_results: ``(key, verdict, summary)`` per entry of any mapping of sub-results.
        fields: everything else, for the key/value table.
        body: HTML of the checker's own view, when it has one and it rendered.
    """

    name: str
    verdict: Verdict
    result: dict[str, Any]
    error: str | None = None
    traceback: str | None = None
    explanation: str | None = None
    seconds: Any = None
    pages: list[str] = field(default_factory=list)
    images: list[str] = field(default_factory=list)
    sub_results: list[tuple[str, str, str]] = field(default_factory=list)
    fields: dict[str, Any] = field(default_factory=dict)
    body: str | None = None

    @property
    def is_problem(self) -> bool:
        """True for an invalid or unknown result."""
        return self.verdict in PROBLEMS

    @property
    def headline(self) -> str:
        """One line for the summary table: the result's ``summary``, else its explanation's first line,
        else its error."""
        summary = self.result.get("summary")
        if isinstance(summary, str) and summary.strip():
            return summary.strip().splitlines()[0]
        if self.error:
            return f"crashed: {self.error}"
        if self.explanation:
            return self.explanation.strip().splitlines()[0]
        return ""

    @property
    def anchor(self) -> str:
        """An HTML id for links to this card."""
        return "checker-" + "".join(ch if ch.isalnum() else "-" for ch in self.name)


def safe_relpath(value: Any, run_dir: Path) -> str | None:
    """``value`` if it names an existing file inside ``run_dir`` by a relative path, else None."""
    if not isinstance(value, str) or not value or value.startswith(("/", "\\")) or "://" in value:
        return None
    try:
        target = (run_dir / value).resolve()
        if not target.is_relative_to(run_dir.resolve()) or not target.is_file():
            return None
    except (OSError, ValueError):
        return None
    return Path(value).as_posix()


def artifacts(result: Mapping[str, Any], run_dir: Path, depth: int = 2) -> list[str]:
    """Files a result names: under ``html``/``plots`` or any string ending in an artifact suffix, nested
    up to ``depth`` levels, kept only if they exist inside ``run_dir``; in order, without repeats."""
    found: list[str] = []

    def visit(value: Any, level: int) -> None:
        if isinstance(value, str):
            if value.lower().endswith(ARTIFACT_SUFFIXES):
                rel = safe_relpath(value, run_dir)
                if rel is not None and rel not in found:
                    found.append(rel)
        elif isinstance(value, Mapping) and level <= depth:
            for v in value.values():
                visit(v, level + 1)
        elif isinstance(value, (list, tuple)) and level <= depth:
            for v in value[:50]:
                visit(v, level + 1)

    visit(result, 0)
    return found


def _sub_results(result: Mapping[str, Any]) -> tuple[list[tuple[str, str, str]], set[str]]:
    rows: list[tuple[str, str, str]] = []
    used: set[str] = set()
    for key, value in result.items():
        if key in SHOWN_ELSEWHERE or not isinstance(value, Mapping) or not value:
            continue
        entries = list(value.items())
        if all(isinstance(v, Mapping) and ("valid" in v or "valid?" in v) for _, v in entries):
            used.add(key)
            for sub, v in entries[:200]:
                summary = v.get("explanation") or v.get("error") or ""
                rows.append((f"{key} / {sub}", verdict_of(v.get("valid", v.get("valid?"))), str(summary)[:300]))
    return rows, used


def make_card(name: str, result: Mapping[str, Any], run_dir: Path) -> Card:
    """Build the card for one checker's result (never raises on an odd shape)."""
    result = dict(result)
    files = artifacts(result, run_dir)
    sub_rows, used = _sub_results(result)
    card = Card(
        name=name,
        verdict=verdict_of(result.get("valid", result.get("valid?"))),
        result=result,
        error=str(result["error"]) if result.get("error") is not None else None,
        traceback=str(result["traceback"]) if result.get("traceback") else None,
        explanation=str(result["explanation"]) if result.get("explanation") else None,
        seconds=result.get("seconds"),
        pages=[f for f in files if f.lower().endswith((".html", ".htm"))],
        images=[f for f in files if not f.lower().endswith((".html", ".htm"))],
        sub_results=sub_rows,
        fields={k: v for k, v in result.items() if k not in SHOWN_ELSEWHERE and k not in used},
    )
    if name in SPECIAL:
        try:
            card.body = environment().get_template(f"cards/{name}.html.j2").render(r=result, card=card)
        except (jinja2.TemplateError, TypeError, ValueError, KeyError, AttributeError):
            card.body = None
    return card


def make_cards(checkers: Mapping[str, Mapping[str, Any]], run_dir: Path) -> list[Card]:
    """Cards for every checker, the most severe verdicts first, then by name."""
    cards = [make_card(name, result, run_dir) for name, result in checkers.items()]
    return sorted(cards, key=lambda c: (SEVERITY.get(c.verdict, 9), c.name))
