"""The timeline view: writes ``timeline.html`` (one lane per process) into the run folder.

A view, not a checker: it judges nothing. The report draws it from the stored history (see
:func:`reports.render.draw_views`); its result names the page under ``html`` so the report embeds it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.history.op import Op
from reports.shading import recorded_styles
from reports.timeline import timeline_html

FILE_NAME = "timeline.html"


class TimelineView:
    """Draws the history as an HTML timeline, one lane per process."""

    name = "timeline"

    def draw(self, history: Sequence[Op], test: Mapping[str, Any], run_dir: Path | None) -> dict[str, Any]:
        """Write ``<run>/timeline.html`` and name it in the result (nothing is written without a run folder)."""
        if run_dir is None:
            return {"valid": True, "html": None, "note": "no run folder to write the timeline into"}
        title = f"{test.get('name', 'run')} timeline"
        path = Path(run_dir) / FILE_NAME
        path.write_text(timeline_html(history, title, recorded_styles(run_dir)), encoding="utf-8")
        processes = {op.process for op in history}
        return {"valid": True, "html": FILE_NAME, "processes": len(processes), "ops": len(history),
                "summary": f"{len(history)} ops from {len(processes)} processes"}
