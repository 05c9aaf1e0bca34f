"""The page of a mutation campaign (``fencepost mutate``), drawn from its summary alone.

The summary is what :func:`harness.mutation.summary.summarize` builds and ``fencepost mutate`` keeps as
``STORE/mutation/<campaign>.json``; the page goes beside it as ``<campaign>.html``. It shows the score
per module, the detection power, each missed mutant's diff with the faults its runs saw and the entry
that would mark it equivalent, the mutants that were broken at start or unknown with why, stale
entries of the equivalents file, and every mutant with links to its runs' reports. Registered under
the ``fencepost.mutation_pages`` entry-point group: ``(summary, out_dir) -> path``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.mutation.equivalents import entry_toml
from harness.mutation.mutants import Mutant
from harness.store import safe_name
from reports.templating import environment

STATUS_ORDER = ("missed", "unknown", "broken", "caught", "equivalent")


def _link(run: str | None, out_dir: Path) -> str | None:
    """A relative link from the page to a run's report (its folder when it has none)."""
    if not run:
        return None
    target = Path(run) / "report.html"
    if not target.exists():
        target = Path(run)
    return os.path.relpath(target, out_dir).replace(os.sep, "/")


def _faults_text(value: Any) -> str:
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={v}" for k, v in value.items())
    return "" if value is None else str(value)


def prepare(summary: Mapping[str, Any], out_dir: Path) -> dict[str, Any]:
    """The template's variables: the summary, with links, the missed mutants' equivalents entries and the
    mutants in the order the page lists them."""
    mutants = []
    for m in summary.get("mutants", []):
        runs = [{**r, "link": _link(r.get("run"), out_dir),
                 "events": [f"{e['at_s']:g} s {e['f']} {_faults_text(e.get('value'))}".rstrip()
                            for e in r.get("fault_events", [])]} for r in m.get("runs", [])]
        entry = entry_toml(Mutant(m["module"], m["operator"], m["occurrence"], m["line"], m["original"],
                                  m["mutated"])) if m["status"] == "missed" else ""
        mutants.append({**m, "runs": runs, "entry": entry})
    order = {s: i for i, s in enumerate(STATUS_ORDER)}
    listed = sorted(mutants, key=lambda m: (order.get(m["status"], 9), m["module"], m["line"], m["id"]))
    baseline = [{**r, "link": _link(r.get("run"), out_dir)} for r in summary.get("baseline", [])]
    return {"s": summary, "mutants": listed, "baseline": baseline,
            "missed": [m for m in listed if m["status"] == "missed"],
            "trouble": [m for m in listed if m["status"] in ("unknown", "broken")]}


def render_mutation_page(summary: Mapping[str, Any], out_dir: str | Path) -> str:
    """The campaign page as HTML (links relative to ``out_dir``, where it is written)."""
    return environment().get_template("mutation.html.j2").render(**prepare(summary, Path(out_dir).resolve()))


def write_mutation_page(summary: Mapping[str, Any], out_dir: str | Path) -> Path:
    """Write ``out_dir/<campaign>.html`` (atomically) and return its path."""
    out = Path(out_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{safe_name(str(summary.get('campaign') or 'mutation'))}.html"
    tmp = out / f".{path.name}.{os.getpid()}"
    tmp.write_text(render_mutation_page(summary, out), encoding="utf-8")
    os.replace(tmp, path)
    return path
