"""Render a run folder's ``report.html``: verdict banner, config, checker results, plots, timeline, files.

A transactional check's anomalies open the report, each cycle drawn (:mod:`reports.txn_view`).
The "Faults" section shows the schedule the seed planned and what the nemesis did (:mod:`reports.schedule_view`).
The report is rebuilt from the stored files alone, so ``fencepost report`` can render any run again,
including one an earlier Fencepost wrote. Checkers judge and reports draw: when the stored results carry
no perf plots or timeline (every run since checkers stopped drawing, an older run, or one never
checked) and the history is readable, the report draws them itself; they are views, so the stored
verdict is never changed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reports.cards import Card, make_card, make_cards
from reports.run_view import RunView, load_run
from reports.schedule_view import schedule_view
from reports.templating import environment
from reports.txn_view import section_for_run

CONFIG_ORDER = ("name", "workload", "nemesis", "nodes", "backend", "seed", "time_limit", "concurrency", "rate", "bug")
MAX_FILES = 200
VIEW_CHECKERS = ("perf", "timeline")


@dataclass(frozen=True)
class FileLink:
    """A file in the run folder the report links to."""

    path: str
    size: int


def config_rows(config: dict[str, Any]) -> list[tuple[str, Any]]:
    """test.json's fields for display: the known ones in order, then the rest by name."""
    rows = [(k, config[k]) for k in CONFIG_ORDER if k in config]
    rows += [(k, config[k]) for k in sorted(config) if k not in CONFIG_ORDER]
    return rows


def file_links(run_dir: Path) -> list[FileLink]:
    """The history, logs and node files, relative to the run folder (at most :data:`MAX_FILES`)."""
    links: list[FileLink] = []
    first = ["history.jsonl", "fencepost.log", "results.json", "test.json"]
    for name in first:
        p = run_dir / name
        if p.is_file():
            links.append(FileLink(name, p.stat().st_size))
    nodes = run_dir / "nodes"
    if nodes.is_dir():
        for p in sorted(nodes.rglob("*")):
            if p.is_file() and len(links) < MAX_FILES:
                links.append(FileLink(p.relative_to(run_dir).as_posix(), p.stat().st_size))
    return links


def _has_view(cards: list[Card], name: str) -> bool:
    return any(c.name == name and (c.images or c.pages) for c in cards)


def draw_views(view: RunView, cards: list[Card]) -> list[Card]:
    """Draw the perf plots and timeline that the stored results lack, if the history can be read."""
    if view.history is None:
        return []
    from reports.perf_view import PerfView
    from reports.timeline_view import TimelineView

    drawn: list[Card] = []
    for drawer in (PerfView(), TimelineView()):
        if _has_view(cards, drawer.name):
            continue
        try:
            result = drawer.draw(view.history, view.config, view.path)
        except Exception as e:
            view.notes.append(f"the report could not draw the {drawer.name} view: {type(e).__name__}: {e}")
            continue
        drawn.append(make_card(drawer.name, result, view.path))
    return drawn


def render_report_html(view: RunView, *, draw: bool = True) -> str:
    """The report for ``view`` as HTML; with ``draw``, missing views are drawn into the run folder."""
    stored = make_cards(view.checker_results, view.path)
    drawn = draw_views(view, stored) if draw else []
    views = [c for c in stored + drawn if c.name in VIEW_CHECKERS]
    results = view.results or {}
    counts: dict[str, int] = {}
    for c in stored:
        counts[c.verdict] = counts.get(c.verdict, 0) + 1
    txn = section_for_run(view.checker_results, view.history, view.notes)
    return environment().get_template("report.html.j2").render(
        view=view,
        txn=txn,
        name=view.name,
        timestamp=view.path.name,
        verdict=view.verdict,
        config=config_rows(view.config),
        cards=stored,
        counts=counts,
        plots=[(c.name, img) for c in views for img in c.images],
        pages=[(c.name, page) for c in views for page in c.pages],
        drawn=[c.name for c in drawn],
        view_names=VIEW_CHECKERS,
        files=file_links(view.path),
        schedule=schedule_view(view.path, view.history, view.config),
        ops=len(view.history) if view.history is not None else None,
        campaign=results.get("campaign"),
        case=results.get("case"),
        extra={k: v for k, v in results.items() if k not in ("valid", "valid?", "checkers", "campaign", "case")},
    )


def write_report(run_dir: str | Path, *, draw: bool = True) -> Path:
    """Render ``run_dir/report.html`` (atomically) and return its path."""
    view = load_run(run_dir)
    html = render_report_html(view, draw=draw)
    out = view.run.report_path
    tmp = out.with_name(f".report.{os.getpid()}.html")
    tmp.write_text(html, encoding="utf-8")
    os.replace(tmp, out)
    return out
