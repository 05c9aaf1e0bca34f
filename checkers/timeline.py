"""The timeline checker: writes ``timeline.html`` (one lane per process) into the run folder.

It judges nothing (``valid`` is always True); its result names the page under ``html`` so the report
embeds it. Without a run folder it writes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from checkers.api import CheckContext
from harness.history.op import Op

FILE_NAME = "timeline.html"


class TimelineChecker:
    """Draws the history as an HTML timeline, one lane per process."""

    name = "timeline"

    def check(self, history: Sequence[Op], ctx: CheckContext) -> dict[str, Any]:
        """Write ``<run>/timeline.html`` and name it in the result."""
        if ctx.run_dir is None:
            return {"valid": True, "html": None, "note": "no run folder to write the timeline into"}
        from reports.timeline import timeline_html

        title = f"{ctx.test.get('name', 'run')} timeline"
        path = Path(ctx.run_dir) / FILE_NAME
        path.write_text(timeline_html(history, title), encoding="utf-8")
        processes = {op.process for op in history}
        return {"valid": True, "html": FILE_NAME, "processes": len(processes), "ops": len(history),
                "summary": f"{len(history)} ops from {len(processes)} processes"}
