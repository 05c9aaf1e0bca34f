"""``fencepost mutate``: mutation testing of a system under test, one mutant at a time.

For each mutant of the system's protocol modules (or a seeded sample of them), a scratch copy of its
code gets the mutation and ``fencepost test`` runs against it at the given seeds: the system's default
campaign, or the one given by ``--nemesis``, ``--workload``, ... (passed through to ``fencepost test``,
as is any other option it takes). A line per mutant as it finishes on stderr; then the score per
module and the detection power as tables, the campaign page and its data under ``STORE/mutation/``,
and a final JSON line on stdout.

Cost: ``(mutants - equivalent) x seeds`` runs of ``--time-limit`` seconds plus set-up and checks (about
15 s each here), less the seeds after a catch; ``--per-package`` adds the same again for every fault
package; the baseline adds one run per seed. Exit 0 when done (1 when the score is below
``--min-score``), 3 on bad input, a baseline that does not pass, or an interruption.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import shlex
import signal
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import click

from harness.cli.errors import fail
from harness.cli.exit_codes import ERROR

DEADLINE_FACTOR = 2.0
DEADLINE_EXTRA_S = 300.0
OWN_OPTIONS = ("--seed", "--store", "--time-limit", "--system", "-s", "--list-bugs")


def today_seed(now: dt.datetime | None = None) -> int:
    """``--sample-seed``'s default: the date in UTC as an int, YYYYMMDD (``now``, else today), so that each day
    draws a fresh sample and a quoted score is never tuned to one fixed sample."""
    return int((now or dt.datetime.now(dt.UTC)).astimezone(dt.UTC).strftime("%Y%m%d"))


def _pass_through(**given: Any) -> list[str]:
    """Command-line options for ``fencepost test`` from the ones given (None: not given)."""
    args: list[str] = []
    for name, value in given.items():
        if value is not None:
            args += [f"--{name.replace('_', '-')}", f"{value:g}" if isinstance(value, float) else str(value)]
    return args


def _check_test_args(args: Sequence[str], extra: Sequence[str]) -> None:
    """Refuse what ``fencepost test`` would refuse in ``args``, and options in ``extra`` (the ones passed
    through unnamed) that ``fencepost mutate`` sets itself."""
    from harness.cli.test_cmd import test as test_command

    own = [a for a in extra if a.split("=")[0] in OWN_OPTIONS]
    if own:
        raise click.UsageError(f"{own[0].split('=')[0]} is fencepost mutate's own (see --first-seed, --seeds, "
                               f"--store, --time-limit, --system)")
    with test_command.make_context("test", [*args, "--seed", "1"]):
        pass


SETTING_OPTIONS = {"nodes": "--nodes", "concurrency": "--concurrency", "rate": "--rate",
                   "nemesis_interval": "--interval"}
"""The TestConfig fields a default campaign may set, and the ``fencepost test`` options that set them."""


def _packages(system: str, nemesis: str | None, workload: str | None, backend: str | None,
              given: Sequence[str]) -> tuple[list[str], list[str]]:
    """The fault packages ``--per-package`` runs alone, and options for those runs.

    With ``--nemesis``, its packages (no options). Without, the default campaign's packages, each run
    with the settings the default campaign uses (the reference system's four nodes, the mix's fault
    interval) unless ``given`` on the command line, so one package alone is measured on the same cluster.
    """
    if nemesis:
        return [n.strip() for n in nemesis.split(",") if n.strip()], []
    from harness.config import TestConfig
    from harness.mix import default_campaign

    def config() -> TestConfig:
        return TestConfig(system=system, workload=workload or "register", backend=backend or "local")

    plain, mixed = config(), default_campaign(config(), frozenset(k for k, o in SETTING_OPTIONS.items() if o in given))
    options: list[str] = []
    for key, option in SETTING_OPTIONS.items():
        value = getattr(mixed, key)
        if option not in given and value != getattr(plain, key):
            options += [option, f"{value:g}" if isinstance(value, float) else str(value)]
    return list(mixed.nemesis), options


@contextlib.contextmanager
def _terminations_interrupt() -> Iterator[None]:
    """SIGTERM and SIGHUP end the campaign as Ctrl-C does (the running test is torn down)."""
    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    saved = {s: signal.signal(s, interrupt) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, handler in saved.items():
            signal.signal(s, handler)


def _show(n: int, total: int, r: Any) -> None:
    """One line on stderr for a finished mutant."""
    m = r.mutant
    where = f"line {m.line}: {m.original} -> {m.mutated or '(line removed)'}"
    caught = [x for x in r.campaign_runs if x.outcome == "caught"]
    if caught:
        x = caught[0]
        at = f" at {x.first_anomaly_s:g} s" if x.first_anomaly_s is not None else (
            f" (no time cited: counted at the {x.evidence_s:g} s campaign's end)" if x.evidence_s is not None else "")
        detail = f"seed {x.seed}: {','.join(x.checkers) or 'invalid'}{at}"
    elif r.reason:  # an equivalent mutant's review, or why a mutant is broken or unknown
        detail = r.reason
    else:
        faults = ", ".join(f"{k} x{v}" for k, v in r.faults().items()) or "no faults"
        detail = f"{len(r.campaign_runs)} run(s) valid; faults seen: {faults}"
    wall = sum(x.wall_s for x in r.runs)
    click.echo(f"mutate: [{n}/{total}] {r.status.upper()} {m.id} ({where}) {detail}"
               + (f" ({wall:g} s)" if r.runs else ""), err=True)


@click.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.option("--system", default=None,
              help="the system under test (`fencepost systems`; default: as `fencepost test` chooses it)")
@click.option("--sample", type=click.IntRange(1), default=None,
              help="run a seeded random sample of N mutants (default: all)")
@click.option("--sample-seed", type=int, default=None,
              help="the sample's seed (default: today's date in UTC as YYYYMMDD, so each day draws a fresh sample; "
                   "printed and recorded)")
@click.option("--seeds", type=click.IntRange(1, 1000), default=1, show_default=True,
              help="test seeds per mutant (a mutant's seeds stop at its first catch)")
@click.option("--first-seed", type=int, default=1, show_default=True, help="seeds are first-seed, first-seed+1, ...")
@click.option("--time-limit", type=click.FloatRange(1, 86400), default=60.0, show_default=True,
              help="seconds of workload per run")
@click.option("--store", default="store", show_default=True, help="run store directory")
@click.option("--module", "modules", multiple=True,
              help="only mutants of modules matching this glob (repeatable): rules.py, system/operator/*")
@click.option("--mutant", "mutant_ids", multiple=True, help="only this mutant (repeatable; ids as --list prints)")
@click.option("--list", "list_only", is_flag=True, help="print the chosen mutants' ids and lines, and exit")
@click.option("--campaign", default=None, help="campaign name for the store's index (default: mutate-<time>)")
@click.option("--equivalents", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="the reviewed equivalent mutants (default: the system's own file)")
@click.option("--per-package", is_flag=True,
              help="also run each mutant under each fault package alone, for detection power per package "
                   "(multiplies the cost by 1 + the number of packages)")
@click.option("--baseline/--no-baseline", default=True, show_default=True,
              help="first run the campaign on the unmutated code at each seed; stop unless it passes")
@click.option("--min-score", type=click.FloatRange(0, 1), default=0.0, show_default=True,
              help="exit 1 when the mutation score is below this")
@click.option("--results-page", "results_dir", default=None, metavar="DIR",
              help="also write the figures as a Markdown page, DIR/mutate-<system>.md, with the commit, machine, "
                   "seeds and command line, and list it in DIR/index.md (the docs: docs/results)")
@click.option("--nemesis", "-n", default=None, help="passed to fencepost test (default: the system's default campaign)")
@click.option("--workload", "-w", default=None, help="passed to fencepost test")
@click.option("--nodes", type=click.IntRange(1, 9), default=None, help="passed to fencepost test")
@click.option("--option", "-o", "options", multiple=True, metavar="NAME=VALUE",
              help="one of the system's own options, passed to fencepost test (repeatable)")
@click.option("--interval", type=click.FloatRange(0.5), default=None, help="passed to fencepost test")
@click.option("--concurrency", type=click.IntRange(1, 512), default=None, help="passed to fencepost test")
@click.option("--rate", type=click.FloatRange(0), default=None, help="passed to fencepost test")
@click.option("--backend", default=None, help="passed to fencepost test")
@click.argument("test_args", nargs=-1, type=click.UNPROCESSED)
def mutate(system: str | None, sample: int | None, sample_seed: int | None, seeds: int, first_seed: int,
           time_limit: float, store: str, modules: tuple[str, ...], mutant_ids: tuple[str, ...], list_only: bool,
           campaign: str | None, equivalents: Path | None, per_package: bool, baseline: bool, min_score: float,
           results_dir: str | None, nemesis: str | None, workload: str | None, nodes: int | None,
           options: tuple[str, ...], interval: float | None, concurrency: int | None, rate: float | None,
           backend: str | None, test_args: tuple[str, ...]) -> None:
    """Mutation testing: run the campaign against each mutant of the system's protocol code; print the
    score per module, detection power, the campaign page's path and a final JSON line.

    Any other option is passed to `fencepost test` (e.g. `-- --bug NAME`). Without --nemesis each mutant
    runs the system's default campaign.
    """
    from harness import registry
    from harness.mutation import equivalents as eq
    from harness.mutation import mutants as mu
    from harness.mutation.scratch import reap
    from harness.plugin_api import HasCode, Mutable

    reap()  # scratch copies a killed session left behind
    try:
        plugin = registry.load_system(system)
    except registry.Refused as e:
        fail(str(e))
    system = plugin.name
    if not isinstance(plugin, Mutable) or not isinstance(plugin, HasCode):
        fail(f"system {system} does not name its mutable modules and code folders (harness.plugin_api.Mutable "
             f"and HasCode), so it cannot be mutation-tested")
    try:
        code = dict(plugin.code())
        files = mu.relative_modules(plugin.mutable_modules(), code)
        sources = {rel: path.read_text(encoding="utf-8") for rel, path in files.items()}
        entries = eq.load(equivalents if equivalents is not None else plugin.equivalent_mutants())
        # Only the chosen modules are enumerated, and those the equivalents file names (to review its entries).
        wanted = [rel for rel in files if (not modules or any(mu.module_matches(rel, p) for p in modules))
                  and (not mutant_ids or rel in {mu.module_of(i) for i in mutant_ids})]
        listed = {rel for rel in files if rel in wanted or rel in {mu.module_of(e.id) for e in entries}}
        everything = [m for rel in files if rel in listed for m in mu.module_mutants(rel, sources[rel])]
        chosen = mu.select([m for m in everything if m.module in wanted], modules=modules, ids=mutant_ids)
    except mu.EngineMissing as e:
        fail(str(e))
    except ValueError as e:
        fail(str(e))
    reviewed = [e for e in entries if mu.module_of(e.id) in listed or mu.module_of(e.id) not in files]
    equivalent, stale = eq.review(reviewed, everything)
    for s in stale:
        click.echo(f"mutate: stale equivalent entry {s.entry.id}: {s.why}", err=True)
    if sample_seed is None:
        sample_seed = today_seed()
    picked = mu.sample(chosen, sample, sample_seed)
    if list_only:
        for m in picked:
            click.echo(f"{m.id}\t{m.line}\t{m.original}  ->  {m.mutated or '(line removed)'}"
                       + ("\t(equivalent)" if m.id in equivalent else ""))
        click.echo(f"mutate: {len(picked)} of {len(chosen)} mutants in {len(wanted)} modules"
                   + (f" (sample seed {sample_seed})" if sample is not None else "")
                   + f"; {sum(m.id in equivalent for m in picked)} listed equivalent; {len(stale)} stale entries",
                   err=True)
        return

    args = [*_pass_through(nemesis=nemesis, workload=workload, nodes=nodes, interval=interval,
                           concurrency=concurrency, rate=rate, backend=backend),
            *(arg for o in options for arg in ("--option", o)), *test_args,
            "--system", system, "--time-limit", f"{time_limit:g}"]
    _check_test_args(args, test_args)
    packages, package_args = _packages(system, nemesis, workload, backend, args) if per_package else ([], [])
    campaign = campaign or time.strftime("mutate-%Y%m%dT%H%M%S", time.gmtime())
    store_dir = Path(store).resolve()
    run_seeds = list(range(first_seed, first_seed + seeds))
    context: dict[str, Any] = {"campaign": campaign, "system": system, "store": str(store_dir),
               "command": shlex.join(["fencepost", "mutate", *sys.argv[2:]]) if len(sys.argv) > 1 else "",
               "test_args": args, "seeds": run_seeds, "time_limit": time_limit,
               "sample": sample, "sample_seed": sample_seed, "mutants_in_modules": len(chosen),
               "modules": wanted,
               "stale_equivalents": [{"id": s.entry.id, "why": s.why, "reason": s.entry.reason} for s in stale],
               "started": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")}
    click.echo(f"mutate: {len(picked)} mutants of {len(chosen)} in {len(wanted)} of {system}'s mutable modules"
               + (f" (sample seed {sample_seed})" if sample is not None else "") + ", "
               f"seeds {first_seed}..{first_seed + seeds - 1}, campaign {campaign}, store {store_dir}"
               + (f", packages alone: {','.join(packages)} {shlex.join(package_args)}".rstrip() if packages else ""),
               err=True)
    from harness.mutation.campaign import Campaign

    job = Campaign(code=code, sources=sources, args=args, store=store_dir, campaign=campaign,
                   seeds=run_seeds, deadline_s=time_limit * DEADLINE_FACTOR + DEADLINE_EXTRA_S,
                   packages=packages, package_args=package_args, nemesis_given=nemesis is not None)
    started = time.monotonic()
    summary: dict[str, Any] = {}
    try:
        with _terminations_interrupt(), job:
            if baseline:
                job.baseline(on_run=lambda r: click.echo(
                    f"mutate: baseline seed {r.seed}: {r.outcome} ({r.wall_s:g} s) {r.run or ''}", err=True))
                context["baseline"] = [r.as_dict() for r in job.baseline_runs]
                bad = [r for r in job.baseline_runs if r.outcome != "passed"]
                if bad:
                    tail = f": {bad[0].output.strip()[-300:]}" if bad[0].output else ""
                    fail(f"the campaign does not pass on the unmutated code (seed {bad[0].seed}: {bad[0].outcome}, "
                         f"{bad[0].run or 'no run folder'}{tail}); mutants would be judged against a false alarm "
                         f"(--no-baseline runs them anyway)")
            for n, mutant in enumerate(picked, 1):
                result = job.run(mutant, equivalent.get(mutant.id))
                _show(n, len(picked), result)
                summary = job.write(context | {"wall_s": round(time.monotonic() - started, 1), "finished": False})
    except KeyboardInterrupt:
        job.write(context | {"wall_s": round(time.monotonic() - started, 1), "finished": False})
        click.echo(f"fencepost: interrupted; {len(job.results)} mutants done, their runs are in the store and the "
                   f"page at {job.page_path or job.data_path}", err=True)
        sys.exit(ERROR)
    summary = job.write(context | {"wall_s": round(time.monotonic() - started, 1), "finished": True})
    from harness.mutation.summary import figures, print_table

    print_table(summary)
    if job.page_path is not None:
        click.echo(f"page: {job.page_path}")
    payload = {"mutate": figures(summary)}
    if results_dir is not None:  # drawn by reports/results_page.py, found through its entry point
        from harness import registry

        for ep in registry.group("fencepost.results_pages").values():
            page = ep.load()(payload, results_dir, name=f"mutate-{system}", title=f"Mutation testing: {system}",
                             seeds=range(first_seed, first_seed + seeds), command=["fencepost", *sys.argv[1:]])
            click.echo(f"mutate: results page {page}", err=True)
    click.echo(json.dumps(payload, sort_keys=True, default=str))
    score = summary["score"]
    sys.exit(1 if score is not None and score < min_score else 0)
