"""The store's index of runs and its campaign pages, built fresh from the run folders on each request.

Each run is summarised from test.json and results.json (never the full history: its op count is a
line count). Campaigns group runs by results.json's ``campaign`` and show a matrix of cases against
verdicts; a case is results.json's ``case``, else ``workload / nemesis / bug``. A campaign whose runs
inject bugs (the detection matrix) also shows, per bug, how often and how fast which checker caught it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.bug_matrix import Cell, Row, summarize
from harness.store import RunDir, RunStore
from reports.run_view import Verdict, load_run
from reports.templating import environment, short_value, stamp_time

VERDICTS: tuple[Verdict, ...] = ("invalid", "unknown", "valid", "unchecked")

_count_cache: dict[Path, tuple[int, int, int]] = {}
_cache_lock = threading.Lock()


def count_lines(path: Path) -> int | None:
    """The number of non-empty lines in ``path`` (cached by size and mtime), or None if unreadable."""
    try:
        st = path.stat()
    except OSError:
        return None
    with _cache_lock:
        cached = _count_cache.get(path)
    if cached is not None and cached[:2] == (st.st_size, st.st_mtime_ns):
        return cached[2]
    try:
        with open(path, "rb") as fh:
            n = sum(1 for line in fh if line.strip())
    except OSError:
        return None
    with _cache_lock:
        _count_cache[path] = (st.st_size, st.st_mtime_ns, n)
    return n


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    return value if isinstance(value, str) else short_value(value, 80)


@dataclass(frozen=True)
class RunSummary:
    """One row of the index."""

    rel: str
    name: str
    timestamp: str
    time: str
    verdict: Verdict
    workload: str
    nemesis: str
    bug: str
    ops: int | None
    campaign: str | None
    case: str
    has_report: bool
    bugs: tuple[str, ...] = ()
    detection: dict[str, Any] | None = None


def _bugs(value: Any) -> tuple[str, ...]:
    """test.json's ``bug``: a list of names (or one name, in older runs)."""
    if isinstance(value, str):
        return (value,) if value else ()
    return tuple(str(b) for b in value if b) if isinstance(value, list) else ()


def summarise(run: RunDir, root: Path) -> RunSummary:
    """The index row for ``run`` (tolerates every missing or odd piece, like the report)."""
    view = load_run(run.path, with_history=False)
    results = view.results or {}
    stats = view.checker_results.get("stats", {})
    ops = stats.get("ops") if isinstance(stats.get("ops"), int) else count_lines(run.history_path)
    cfg = view.config
    case = results.get("case")
    case_text = _text(case) if case is not None else " / ".join(
        _text(cfg.get(k)) or "none" for k in ("workload", "nemesis", "bug"))
    campaign = results.get("campaign")
    return RunSummary(
        rel=os.path.relpath(run.path, root).replace(os.sep, "/"),
        name=view.name,
        timestamp=run.timestamp,
        time=stamp_time(run.timestamp),
        verdict=view.verdict,
        workload=_text(cfg.get("workload")),
        nemesis=_text(cfg.get("nemesis")),
        bug=_text(cfg.get("bug")),
        ops=ops,
        campaign=str(campaign) if campaign is not None else None,
        case=case_text,
        has_report=run.report_path.exists(),
        bugs=_bugs(cfg.get("bug")),
        detection=results.get("detection") if isinstance(results.get("detection"), dict) else None,
    )


def summaries(store: RunStore) -> list[RunSummary]:
    """A row for every run in the store, newest first."""
    root = store.root
    rows = [summarise(run, root) for run in store.runs()]
    return sorted(rows, key=lambda r: r.timestamp, reverse=True)


def campaign_counts(rows: Iterable[RunSummary]) -> dict[str, dict[str, int]]:
    """``{campaign: {verdict: count}}`` for every campaign, in name order."""
    out: dict[str, dict[str, int]] = {}
    for r in rows:
        if r.campaign is not None:
            counts = out.setdefault(r.campaign, dict.fromkeys(VERDICTS, 0))
            counts[r.verdict] += 1
    return dict(sorted(out.items()))


def render_index(store: RunStore) -> str:
    """The index page: every run, sortable and filterable, and the campaigns."""
    rows = summaries(store)
    return environment().get_template("index.html.j2").render(
        rows=rows, campaigns=campaign_counts(rows), verdicts=VERDICTS, root=str(store.root))


def campaign_matrix(rows: Iterable[RunSummary], campaign: str) -> dict[str, dict[str, list[RunSummary]]]:
    """``{case: {verdict: [runs]}}`` for one campaign, cases in name order."""
    matrix: dict[str, dict[str, list[RunSummary]]] = {}
    for r in rows:
        if r.campaign == campaign:
            matrix.setdefault(r.case, {v: [] for v in VERDICTS})[r.verdict].append(r)
    return dict(sorted(matrix.items()))


def detection_rows(rows: Iterable[RunSummary], campaign: str) -> list[Row]:
    """The bug-detection table of a campaign whose runs inject bugs (empty if none does).

    One row per bug: runs, detected (invalid) runs, median test time to the first evidence, and the
    checkers that caught it; then the runs without a bug, whose non-valid verdicts are false alarms.
    """
    mine = [r for r in rows if r.campaign == campaign]
    if not any(r.bugs for r in mine):
        return []
    verdicts: dict[str, bool | str] = {"valid": True, "invalid": False}
    cells = [Cell(",".join(r.bugs) or None, ",".join(r.bugs), 0, verdicts.get(r.verdict, "unknown"),
                  list((r.detection or {}).get("checkers", [])), (r.detection or {}).get("first_anomaly_s"),
                  r.rel) for r in sorted(mine, key=lambda r: (",".join(r.bugs), r.timestamp))]
    return summarize(cells)


def render_campaign(store: RunStore, campaign: str) -> str | None:
    """The campaign page (matrix of cases x verdicts, and the bug-detection table), or None if no run
    belongs to ``campaign``."""
    rows = summaries(store)
    matrix = campaign_matrix(rows, campaign)
    if not matrix:
        return None
    totals = {v: sum(len(cells[v]) for cells in matrix.values()) for v in VERDICTS}
    return environment().get_template("campaign.html.j2").render(
        campaign=campaign, matrix=matrix, verdicts=VERDICTS, totals=totals,
        detection=detection_rows(rows, campaign))
