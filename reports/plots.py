"""Perf plots drawn with matplotlib's Agg canvas: raw latency, latency quantiles and throughput.

matplotlib is imported inside each function, never at module import, so the CLI starts fast. The
object-oriented API (``Figure``, no pyplot) keeps no global state, so drawing is safe from threads.
Every plot shades the fault windows, one colour per fault kind (see :mod:`reports.shading`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.history.op import Call
from reports.faults import FaultWindow
from reports.shading import fault_style

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

OUTCOME_COLORS = {"ok": "#2b7bba", "fail": "#e6457a", "info": "#f0a202"}
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


def shade_faults(ax: Axes, windows: Sequence[FaultWindow]) -> None:
    """Shade each window on ``ax`` in its fault's colour, with one legend entry per fault kind."""
    labelled: set[str] = set()
    for w in windows:
        style = fault_style(w.fault)
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


def latency_raw(calls: Sequence[Call], windows: Sequence[FaultWindow], path: Path, title: str = "") -> Path:
    """Every call's latency against its invocation time; colour by outcome, marker by function."""
    fig, ax = _figure(f"{title} raw latency".strip(), "latency (ms)")
    shade_faults(ax, windows)
    fs = sorted({c.f for c in calls})
    for i, f in enumerate(fs):
        for outcome, color in OUTCOME_COLORS.items():
            pts = [c for c in calls if c.f == f and c.outcome.value == outcome]
            if pts:
                ax.scatter([c.call_time / 1e9 for c in pts], [_latency_ms(c) for c in pts], s=9, alpha=0.7,
                           color=color, marker=MARKERS[i % len(MARKERS)], label=f"{f} {outcome}", linewidths=0)
    ax.set_yscale("log")
    ax.set_xlim(*_span(calls, windows))
    return _finish(fig, ax, path)


def _buckets(lo: float, hi: float) -> tuple[float, int]:
    width = max((hi - lo) / BUCKETS, 0.1)
    return width, int((hi - lo) / width) + 1


def latency_quantiles(calls: Sequence[Call], windows: Sequence[FaultWindow], path: Path, title: str = "") -> Path:
    """Latency quantiles of ok calls over time, one colour per function, one dash per quantile."""
    from checkers.perf import quantile

    fig, ax = _figure(f"{title} latency quantiles (ok calls)".strip(), "latency (ms)")
    shade_faults(ax, windows)
    lo, hi = _span(calls, windows)
    width, n = _buckets(lo, hi)
    colors = ("#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf")
    for i, f in enumerate(sorted({c.f for c in calls})):
        buckets: list[list[float]] = [[] for _ in range(n)]
        for c in calls:
            if c.f == f and c.outcome.value == "ok":
                buckets[min(n - 1, int((c.call_time / 1e9 - lo) / width))].append(_latency_ms(c))
        xs = [lo + (k + 0.5) * width for k in range(n) if buckets[k]]
        if not xs:
            continue
        for q, dash in QUANTILE_STYLES:
            ys = [quantile(sorted(b), q) for b in buckets if b]
            name = "max" if q == 1.0 else f"p{round(q * 100)}"
            ax.plot(xs, ys, dash, color=colors[i % len(colors)], lw=1.2, label=f"{f} {name}")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    return _finish(fig, ax, path)


def throughput(calls: Sequence[Call], windows: Sequence[FaultWindow], path: Path, title: str = "") -> Path:
    """Completions per second over time, per function and outcome."""
    fig, ax = _figure(f"{title} throughput".strip(), "completions / s")
    shade_faults(ax, windows)
    lo, hi = _span(calls, windows)
    width, n = _buckets(lo, hi)
    for i, f in enumerate(sorted({c.f for c in calls})):
        for outcome, color in OUTCOME_COLORS.items():
            counts = [0] * n
            for c in calls:
                if c.f == f and c.outcome.value == outcome:
                    counts[min(n - 1, max(0, int((_done(c) / 1e9 - lo) / width)))] += 1
            if any(counts):
                ax.plot([lo + (k + 0.5) * width for k in range(n)], [k / width for k in counts],
                        color=color, marker=MARKERS[i % len(MARKERS)], ms=3, lw=1, label=f"{f} {outcome}")
    ax.set_xlim(lo, hi)
    ax.set_ylim(bottom=0)
    return _finish(fig, ax, path)


def draw_perf_plots(calls: Sequence[Call], windows: Sequence[FaultWindow], out_dir: Path,
                    title: str = "") -> list[Path]:
    """Draw all three perf plots into ``out_dir`` and return their paths."""
    drawers: dict[str, Any] = {
        "latency-raw.png": latency_raw,
        "latency-quantiles.png": latency_quantiles,
        "rate.png": throughput,
    }
    return [draw(calls, windows, out_dir / name, title) for name, draw in drawers.items()]
