"""Perf plots drawn with matplotlib's Agg canvas: raw latency, latency quantiles and throughput.

matplotlib is imported inside each function, never at module import, so the CLI starts fast. The
object-oriented API (``Figure``, no pyplot) keeps no global state, so drawing is safe from threads.
Every plot shades the fault windows, one colour per fault kind (see :mod:`reports.shading`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.history.faults import FaultWindow
from harness.history.op import Call
from reports.shading import FaultStyle, fault_style

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

OUTCOME_COLORS = {"ok": "#2b7bba", "fail": "#e6457a", "info": "#f0a202"}
F_COLORS = ("#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#17becf", "#7f7f7f")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
BUCKETS = 60
QUANTILE_STYLES = ((0.5, "-"), (0.95, "--"), (0.99, "-."), (1.0, ":"))


def _figure(title: str, ylabel: str) -> tuple[Figure, Axes]:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11, 4.2), dpi=100, layout="constrained")
    ax = fig.subplots()
    ax.set_title(title, fontsize=11)
    ax.set_xlabel("time (s)")
    ax.set_ylabel(ylabel)
    ax.grid(True, which="major", alpha=0.3)
    return fig, ax


def shade_faults(ax: Axes, windows: Sequence[FaultWindow], styles: Mapping[str, FaultStyle] | None = None) -> None:
    """Shade each window on ``ax`` in its fault's colour (``styles``: those the run recorded), with one
    legend entry per fault kind."""
    labelled: set[str] = set()
    for w in windows:
        style = fault_style(w.fault, styles)
        label = style.label if w.fault not in labelled else None
        labelled.add(w.fault)
        ax.axvspan(w.start / 1e9, w.end / 1e9, color=style.color, alpha=style.alpha, lw=0, label=label)


def _finish(fig: Figure, ax: Axes, path: Path) -> Path:
    handles, _ = ax.get_legend_handles_labels()
    if handles:
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    return path


def _latency_ms(c: Call) -> float:
    return max(_done(c) - c.call_time, 1) / 1e6


def _done(c: Call) -> int:
    return c.complete.time if c.complete is not None else c.return_time


def _span(calls: Sequence[Call], windows: Sequence[FaultWindow]) -> tuple[float, float]:
    lo = min([c.call_time for c in calls] + [w.start for w in windows]) / 1e9
    hi = max([_done(c) for c in calls] + [w.end for w in windows]) / 1e9
    return lo, hi if hi > lo else lo + 1.0


def latency_raw(calls: Sequence[Call], windows: Sequence[FaultWindow], path: Path, title: str = "",
                styles: Mapping[str, FaultStyle] | None = None) -> Path:
    """Every call's latency against its invocation time; colour by outcome, marker by function."""
    fig, ax = _figure(f"{title} raw latency".strip(), "latency (ms)")
    shade_faults(ax, windows, styles)
    import numpy as np

    groups: dict[tuple[str, str], list[Call]] = {}
    for c in calls:
        groups.setdefault((c.f, c.outcome.value), []).append(c)
    fs = sorted({c.f for c in calls})
    for i, f in enumerate(fs):
        for outcome, color in OUTCOME_COLORS.items():
            pts = groups.get((f, outcome))
            if pts:
                xs = np.fromiter((c.call_time / 1e9 for c in pts), float, len(pts))
                ys = np.fromiter((_latency_ms(c) for c in pts), float, len(pts))
                ax.scatter(xs, ys, s=9, alpha=0.7, color=color, marker=MARKERS[i % len(MARKERS)],
                           label=f"{f} {outcome}", linewidths=0, rasterized=True)
    _plain_log_axis(ax)
    ax.set_xlim(*_span(calls, windows))
    return _finish(fig, ax, path)


def _buckets(lo: float, hi: float, points: int, per_bucket: int) -> tuple[float, int]:
    """A bucket width (s) and count giving about ``per_bucket`` points a bucket, 4 to :data:`BUCKETS` buckets."""
    wanted = max(4, min(BUCKETS, points // max(1, per_bucket)))
    width = max((hi - lo) / wanted, 0.1)
    return width, int((hi - lo) / width) + 1


def _plain_log_axis(ax: Axes) -> None:
    from matplotlib.ticker import FuncFormatter, NullFormatter

    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())


def latency_quantiles(calls: Sequence[Call], windows: Sequence[FaultWindow], path: Path, title: str = "",
                      styles: Mapping[str, FaultStyle] | None = None) -> Path:
    """Latency quantiles of ok calls over time, one colour per function, one dash per quantile."""
    from checkers.perf import quantile

    fig, ax = _figure(f"{title} latency quantiles (ok calls)".strip(), "latency (ms)")
    shade_faults(ax, windows, styles)
    lo, hi = _span(calls, windows)
    fs = sorted({c.f for c in calls})
    oks = [c for c in calls if c.outcome.value == "ok"]
    width, n = _buckets(lo, hi, len(oks) // max(1, len(fs)), 8)
    for i, f in enumerate(fs):
        buckets: list[list[float]] = [[] for _ in range(n)]
        for c in oks:
            if c.f == f:
                buckets[min(n - 1, int((c.call_time / 1e9 - lo) / width))].append(_latency_ms(c))
        if not any(buckets):
            continue
        xs = [lo + (k + 0.5) * width for k in range(n)]
        for q, dash in QUANTILE_STYLES:  # an empty bucket is a gap in the line, not a bridge
            ys = [quantile(sorted(b), q) if b else math.nan for b in buckets]
            name = "max" if q == 1.0 else f"p{round(q * 100)}"
            ax.plot(xs, ys, dash, color=F_COLORS[i % len(F_COLORS)], lw=1.2, marker=".", ms=3, label=f"{f} {name}")
    latencies = [_latency_ms(c) for c in oks]
    if latencies and max(latencies) / min(latencies) > 100:  # spans decades: log, else plain is easier to read
        _plain_log_axis(ax)
    else:
        ax.set_ylim(bottom=0)
    ax.set_xlim(lo, hi)
    return _finish(fig, ax, path)


def throughput(calls: Sequence[Call], windows: Sequence[FaultWindow], path: Path, title: str = "",
               styles: Mapping[str, FaultStyle] | None = None) -> Path:
    """Completions per second over time: ok per function, and fail and info over all functions."""
    fig, ax = _figure(f"{title} throughput".strip(), "completions / s")
    shade_faults(ax, windows, styles)
    lo, hi = _span(calls, windows)
    width, n = _buckets(lo, hi, len(calls), 15)
    xs = [lo + (k + 0.5) * width for k in range(n)]
    series: list[tuple[str, str, str, list[Call]]] = [
        (f"{f} ok", F_COLORS[i % len(F_COLORS)], "-", [c for c in calls if c.f == f and c.outcome.value == "ok"])
        for i, f in enumerate(sorted({c.f for c in calls}))]
    series += [(f"all {o}", OUTCOME_COLORS[o], "--", [c for c in calls if c.outcome.value == o])
               for o in ("fail", "info")]
    for label, color, dash, chosen in series:
        counts = [0] * n
        for c in chosen:
            counts[min(n - 1, max(0, int((_done(c) / 1e9 - lo) / width)))] += 1
        if any(counts):
            ax.plot(xs, [k / width for k in counts], dash, color=color, marker=".", ms=4, lw=1.2, label=label)
    ax.set_xlim(lo, hi)
    ax.set_ylim(bottom=0)
    return _finish(fig, ax, path)


def draw_perf_plots(calls: Sequence[Call], windows: Sequence[FaultWindow], out_dir: Path,
                    title: str = "", styles: Mapping[str, FaultStyle] | None = None) -> list[Path]:
    """Draw all three perf plots into ``out_dir`` and return their paths (``styles``: the run's recorded
    fault styles, see :func:`reports.shading.recorded_styles`)."""
    drawers: dict[str, Any] = {
        "latency-raw.png": latency_raw,
        "latency-quantiles.png": latency_quantiles,
        "rate.png": throughput,
    }
    return [draw(calls, windows, out_dir / name, title, styles) for name, draw in drawers.items()]
