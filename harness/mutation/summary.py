"""A mutation campaign's figures: the score per module, detection power, the table, the page, the JSON line.

**Detection power** is what a user can quote for "how good is my campaign": for the campaign as run
(``default``: the system's default campaign, when no ``--nemesis`` was given) and, with
``--per-package``, for each fault package alone, the fraction of scored mutants (neither equivalent
nor broken at start: the score's denominator) that a run caught with its first evidence at most 30 s
and 60 s of test time in (``detection.first_anomaly_s`` of the run's results.json). Evidence from after
the run's time limit (a final read, the recovery checker's retries) and evidence with no time (the
convergence checker cites none: it judges the state after the heal; nor does log-pattern on logs whose
lines carry no timestamp, as the reference store's) count
at the time limit: a campaign of that length caught it. So such a catch in a 60 s run counts within 60 s,
never within 30 s.

The campaign page is drawn by whatever the ``fencepost.mutation_pages`` entry points name (the
reports package's, by default): ``(summary, out_dir) -> path``. The harness never imports reports.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.mutation.classify import CAUGHT, SCORED, STATUSES, MutantResult

PAGES = "fencepost.mutation_pages"
WINDOWS_S = (30, 60)
DEFAULT_LABEL = "default"


def score(results: Sequence[MutantResult]) -> float | None:
    """Caught over scored mutants (caught, missed, unknown); None when none is scored."""
    scored = [r for r in results if r.status in SCORED]
    return round(sum(r.status == CAUGHT for r in scored) / len(scored), 4) if scored else None


def counts(results: Sequence[MutantResult]) -> dict[str, int]:
    """How many mutants of each class."""
    return {s: sum(r.status == s for r in results) for s in STATUSES}


def by_module(results: Sequence[MutantResult]) -> dict[str, dict[str, Any]]:
    """``{module: {class: count, ..., "mutants": n, "score": s}}``, modules in name order."""
    modules: dict[str, list[MutantResult]] = {}
    for r in results:
        modules.setdefault(r.mutant.module, []).append(r)
    return {m: {**counts(rs), "mutants": len(rs), "score": score(rs)} for m, rs in sorted(modules.items())}


def detection_power(results: Sequence[MutantResult], label: str, packages: Sequence[str] = ()) -> dict[str, Any]:
    """``{label or package: {"mutants": n, "caught": f, "within_30s": f, "within_60s": f}}``: fractions of
    the scored mutants; ``label`` is the campaign as run, ``packages`` those run alone."""
    scored = [r for r in results if r.status in SCORED]
    power: dict[str, Any] = {}
    for name, package in [(label, None), *((p, p) for p in packages)]:
        row: dict[str, Any] = {"mutants": len(scored)}
        row["caught"] = round(sum(r.caught_by(package) for r in scored) / len(scored), 4) if scored else None
        for w in WINDOWS_S:
            row[f"within_{w}s"] = (round(sum(r.caught_within(w, package) for r in scored) / len(scored), 4)
                                   if scored else None)
        power[name] = row
    return power


def summarize(results: Sequence[MutantResult], *, label: str, packages: Sequence[str] = (),
              **context: Any) -> dict[str, Any]:
    """The whole campaign as one JSON-ready dict: ``context`` (campaign, system, store, options, ...),
    the counts, score, score per module, detection power and every mutant with its runs."""
    return {**context, "label": label, "packages": list(packages), "counts": counts(results),
            "score": score(results), "by_module": by_module(results),
            "detection_power": detection_power(results, label, packages),
            "mutants": [r.as_dict() for r in results]}


def figures(summary: Mapping[str, Any]) -> dict[str, Any]:
    """The final JSON line's figures: the summary without each mutant's (and the baseline's) details, with the
    missed ids."""
    out = {k: v for k, v in summary.items() if k != "mutants"}
    out["missed"] = [m["id"] for m in summary.get("mutants", []) if m["status"] == "missed"]
    if "baseline" in out:
        out["baseline"] = [{"seed": r["seed"], "outcome": r["outcome"], "run": r["run"]} for r in out["baseline"]]
    return out


def print_table(summary: Mapping[str, Any], width: int = 140) -> None:
    """The score per module and the detection power, as rich tables on stdout."""
    from rich.console import Console
    from rich.table import Table

    def pct(value: float | None) -> str:
        return "-" if value is None else f"{value:.0%}"

    table = Table(title=f"Mutation score ({summary.get('campaign', '')})")
    for col in ("module", "mutants", *STATUSES, "score"):
        table.add_column(col, justify="left" if col == "module" else "right")
    total = {**summary["counts"], "score": summary["score"], "mutants": sum(summary["counts"].values())}
    rows = [*summary["by_module"].items(), ("all", total)]
    for module, row in rows:
        table.add_row(module, str(row["mutants"]), *(str(row[s]) for s in STATUSES), pct(row["score"]))
    power = Table(title="Detection power (scored mutants caught, first evidence within)")
    for col in ("faults", "mutants", "30 s", "60 s", "at all"):
        power.add_column(col, justify="left" if col == "faults" else "right")
    for name, row in summary["detection_power"].items():
        power.add_row(name, str(row["mutants"]), pct(row["within_30s"]), pct(row["within_60s"]), pct(row["caught"]))
    console = Console(width=width)
    console.print(table)
    console.print(power)


def write_page(summary: Mapping[str, Any], out_dir: Path) -> Path | None:
    """Draw the campaign page with the first installed ``fencepost.mutation_pages`` entry point; its
    path, or None when none is installed."""
    from harness.registry import group

    pages = group(PAGES)
    if not pages:
        return None
    _, ep = sorted(pages.items())[0]
    return Path(ep.load()(summary, out_dir))
