"""``fencepost matrix``: run the seeded-bug detection matrix and print its table.

Exit 0 when every bug was detected in at least ``--min-rate`` of its runs, the clean system raised no
alarm and no run ended in an error; 1 otherwise; 3 on bad input. The last line of output is the matrix as
one JSON object.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

import click

from harness.cli.errors import fail, require_docker_engine
from harness.cli.exit_codes import ERROR

if TYPE_CHECKING:
    from harness.bug_matrix import Cell, Row

VERDICTS = {True: "valid", False: "INVALID"}


def page_name(system: str, backend: str, default_workload: str | None, clean_only: bool = False) -> str:
    """The results page's file name (without ``.md``) for a matrix of ``system`` on ``backend``: runs of the
    same matrix on two backends, or with and without the bugs, get pages of their own, not one that the
    later run overwrites."""
    kind = f"-default-{default_workload}" if default_workload else ""
    return (f"matrix-{system}{kind}" + ("-clean" if clean_only else "")
            + (f"-{backend}" if backend != "local" else ""))


def page_title(system: str, backend: str, default_workload: str | None, clean_only: bool = False) -> str:
    """The results page's title, naming what :func:`page_name` tells apart."""
    return (f"Detection matrix: {system}" + (f", default campaign ({default_workload})" if default_workload else "")
            + (", clean system" if clean_only else "") + (f", {backend} backend" if backend != "local" else ""))


@click.command()
@click.option("--bug", "bugs", multiple=True, help="a bug to include (repeatable; default: every bug)")
@click.option("--seeds", type=click.IntRange(1, 1000), default=10, show_default=True, help="seeds per bug")
@click.option("--first-seed", type=int, default=1, show_default=True, help="seeds are first-seed, first-seed+1, ...")
@click.option("--system", default=None,
              help="the system under test (`fencepost systems`; default: as `fencepost test` chooses it)")
@click.option("--option", "-o", "options", multiple=True, metavar="NAME=VALUE",
              help="one of the system's own options, for every run (repeatable; `fencepost systems` lists them)")
@click.option("--backend", default="local", show_default=True, help="local or docker (`fencepost systems`)")
@click.option("--store", default="store", show_default=True, help="run store directory")
@click.option("--time-limit", type=click.FloatRange(1, 86400), default=None,
              help="seconds of workload per run (default: each recipe's own)")
@click.option("--clean/--no-clean", default=True, show_default=True,
              help="also run every recipe without its bug, to count false alarms")
@click.option("--clean-only", is_flag=True, help="run only the recipes without their bugs (the false-alarm check)")
@click.option("--min-rate", type=click.FloatRange(0, 1), default=0.9, show_default=True,
              help="detection rate each bug must reach for exit 0")
@click.option("--campaign", default=None, help="campaign name for the store's index (default: matrix-<time>)")
@click.option("--default-campaign", "default_workload", default=None, metavar="WORKLOAD",
              help="run the system's default campaign (every fault, no recipe) on WORKLOAD instead of each bug's "
                   "recipe, 120 s unless --time-limit; the clean system once per seed")
@click.option("--results-page", "results_dir", default=None, metavar="DIR",
              help="also write the matrix as a Markdown page, DIR/matrix-<system>.md, with the commit, machine, "
                   "seeds and command line, and list it in DIR/index.md (the docs: docs/results)")
def matrix(bugs: tuple[str, ...], seeds: int, first_seed: int, system: str | None, options: tuple[str, ...],
           backend: str, store: str,
           time_limit: float | None, clean: bool, clean_only: bool, min_rate: float, campaign: str | None,
           default_workload: str | None, results_dir: str | None) -> None:
    """Run each known-unsafe mode's recipe (or the default campaign) over several seeds, with and without
    the mode; print the matrix."""
    from harness import registry
    from harness.bug_matrix import passed, run_matrix, summarize

    try:
        plugin = registry.load_system(system)
        registry.load_backend(backend)
        given_options = registry.parse_option_args(options)
        registry.resolve_options(plugin, given_options)
    except registry.Refused as e:
        fail(str(e))
    system = plugin.name
    known = plugin.bugs()
    chosen = list(bugs) or sorted(known)
    for b in chosen:
        if b not in known:
            fail(f"system {system} has no bug {b!r}; known: {', '.join(sorted(known)) or 'none'}")
        missing = [n for n in known[b].recipe.nemesis if n not in registry.nemesis_names(plugin)]
        if missing:
            fail(f"bug {b}: its recipe needs the nemesis {', '.join(missing)}, which is not available")
    if default_workload is not None and default_workload not in registry.workload_names():
        fail(f"unknown workload {default_workload!r}; known: {', '.join(registry.workload_names())}")
    if backend == "docker":
        require_docker_engine()

    try:
        cells = run_matrix(chosen, range(first_seed, first_seed + seeds), store,
                           recipes={b: known[b].recipe for b in chosen}, system=system, backend=backend,
                           clean=clean or clean_only, time_limit=time_limit, campaign=campaign, on_cell=show_cell,
                           with_bugs=not clean_only, default_workload=default_workload, options=given_options)
    except KeyboardInterrupt:
        click.echo("fencepost: interrupted; finished runs are in the store", err=True)
        sys.exit(ERROR)
    rows = summarize(cells)
    print_table(rows)
    payload = {"matrix": [r.as_dict() for r in rows], "passed": passed(rows, min_rate)}
    if results_dir is not None:  # drawn by reports/results_page.py, found through its entry point
        writers = registry.group("fencepost.results_pages")
        if not writers:
            click.echo("fencepost: warning: no results page writer is installed (fencepost.results_pages)", err=True)
        for ep in writers.values():
            page = ep.load()(payload, results_dir, name=page_name(system, backend, default_workload, clean_only),
                             title=page_title(system, backend, default_workload, clean_only),
                             seeds=range(first_seed, first_seed + seeds), command=["fencepost", *sys.argv[1:]])
            click.echo(f"matrix: results page {page}", err=True)
    click.echo(json.dumps(payload))
    sys.exit(0 if passed(rows, min_rate) else 1)


def show_cell(c: Cell) -> None:
    """One line on stderr per finished run."""
    what = c.bug or f"clean ({c.recipe_of})"
    if c.error:
        click.echo(f"matrix: {what} seed={c.seed} ERROR {c.error} ({c.wall_s:g} s) {c.run}", err=True)
        return
    verdict = VERDICTS.get(c.verdict, "unknown") if isinstance(c.verdict, bool) else "unknown"
    ttd = "" if c.first_anomaly_s is None else f" first anomaly at {c.first_anomaly_s:g} s"
    click.echo(f"matrix: {what} seed={c.seed} {verdict} {','.join(c.checkers)}{ttd} ({c.wall_s:g} s) {c.run}",
               err=True)


def print_table(rows: Sequence[Row]) -> None:
    """The matrix as a rich table on stdout."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title="Detection matrix")
    for col in ("bug", "detected", "rate", "median time to detection", "caught by", "errors"):
        table.add_column(col)
    for r in rows:
        table.add_row(r.bug or "clean system (false alarms)", f"{r.detected}/{r.finished}", f"{r.rate:.0%}",
                      "-" if r.median_s is None else f"{r.median_s:g} s",
                      ", ".join(f"{n} ({k})" for n, k in r.catching) or "-", str(r.errored) if r.errored else "-")
    Console(width=140).print(table)
