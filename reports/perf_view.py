"""The perf view: raw latency, latency quantiles and throughput plots, with fault windows shaded.

A view, not a checker: the perf checker (:mod:`checkers.perf`) computes the figures, and the report
draws these PNGs under ``<run>/perf/`` from the stored history (see :func:`reports.render.draw_views`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from checkers.perf import completed_calls
from harness.history.faults import fault_windows
from harness.history.op import Op
from reports.shading import recorded_styles

PLOT_DIR = "perf"


class PerfView:
    """Draws the three perf plots of a history."""

    name = "perf"

    def draw(self, history: Sequence[Op], test: Mapping[str, Any], run_dir: Path | None) -> dict[str, Any]:
        """Write the PNGs under ``<run>/perf/`` and name them under ``plots`` (none without a run folder)."""
        calls = completed_calls(history)
        if run_dir is None or not calls:
            return {"valid": True, "plots": [], "note": "no run folder or no completed calls to plot"}
        from reports.plots import draw_perf_plots

        out_dir = Path(run_dir) / PLOT_DIR
        written = draw_perf_plots(calls, fault_windows(history), out_dir, title=str(test.get("name", "")),
                                  styles=recorded_styles(run_dir))
        return {"valid": True, "plots": [p.relative_to(run_dir).as_posix() for p in written],
                "summary": f"{len(written)} plots of {len(calls)} calls"}
