"""``fencepost test``: run a fault campaign against a system under test, check it, report it."""

from __future__ import annotations

import sys

import click

from harness.cli.errors import fail, require_docker_engine
from harness.cli.exit_codes import ERROR, for_validity
from harness.config import TestConfig
from harness.plugin_api import default_workload

VERDICT_WORDS = {True: "VALID", False: "INVALID", "unknown": "UNKNOWN"}
WHY_LINES = 6


@click.command()
@click.option("--system", "-s", "system_name", default=None,
              help="the system under test: an installed plugin (`fencepost systems`); default: $FENCEPOST_SYSTEM, "
                   "else system under [tool.fencepost] in pyproject.toml, else the only one installed")
@click.option("--workload", "-w", default=None,
              help="register, log, set, bank or lock (default: register; `fencepost systems` shows each system's)")
@click.option("--nemesis", "-n", default=None,
              help="comma-separated fault packages (partition,kill,pause,wipe,...), or none; default: the system's "
                   "default campaign, every fault it can do, overlapping")
@click.option("--nodes", type=click.IntRange(1, 9), default=3, show_default=True, help="number of data nodes")
@click.option("--option", "-o", "options", multiple=True, metavar="NAME=VALUE",
              help="one of the system's own options (repeatable; `fencepost systems` lists each system's)")
@click.option("--time-limit", type=click.FloatRange(1, 86400), default=30.0, show_default=True,
              help="seconds of workload")
@click.option("--concurrency", type=click.IntRange(1, 512), default=10, show_default=True, help="client workers")
@click.option("--rate", type=click.FloatRange(0), default=200.0, show_default=True,
              help="target ops per second (0: unlimited)")
@click.option("--seed", type=int, default=None, help="seed for generators and the nemesis schedule")
@click.option("--interval", type=click.FloatRange(0.5), default=5.0, show_default=True,
              help="mean seconds between fault actions")
@click.option("--backend", default="local", show_default=True,
              help="where the processes run: local or docker (any installed backend)")
@click.option("--store", default="store", show_default=True, help="run store directory")
@click.option("--bug", multiple=True, help="switch on a known-unsafe mode of the system (repeatable; see --list-bugs)")
@click.option("--list-bugs", is_flag=True, help="print the system's known-unsafe modes and exit")
@click.option("--plan", is_flag=True, help="print the fault schedule this test would run (and, for the default "
                                           "campaign, each fault's share of its windows), start nothing, exit")
@click.pass_context
def test(ctx: click.Context, system_name: str | None, workload: str | None, nemesis: str | None, nodes: int,
         options: tuple[str, ...], time_limit: float, concurrency: int, rate: float, seed: int | None,
         interval: float, backend: str, store: str, bug: tuple[str, ...], list_bugs: bool, plan: bool) -> None:
    """Run a test: set up, drive clients and faults, heal, check, report. Exits 0/1/2/3.

    With one --bug and neither --workload nor --nemesis, the bug's recommended test runs (its workload,
    faults, time limit and fault interval; an explicit --time-limit or --interval still wins).
    """
    from harness import registry

    try:
        plugin = registry.load_system(system_name)
        cli_options = registry.parse_option_args(options)
    except registry.Refused as e:
        fail(str(e))
    system_name = plugin.name
    given_options: dict[str, object] = dict(cli_options)
    known = plugin.bugs()
    if list_bugs:
        for name, b in known.items():
            click.echo(f"{name}\t{b.what}")
        return
    unknown_bugs = [b for b in bug if b not in known]
    if unknown_bugs:
        fail(f"unknown bug(s) {', '.join(unknown_bugs)} for system {system_name}; see "
             f"`fencepost test --system {system_name} --list-bugs`")
    if backend not in registry.backend_names():
        fail(f"unknown backend {backend!r}; available: {', '.join(registry.backend_names())}")
    if backend == "docker":
        require_docker_engine()
    extra: dict[str, object] = {}
    settings: dict[str, object] = {}
    if len(bug) == 1 and workload is None and nemesis is None:
        r = known[bug[0]].recipe
        extra = r.config_fields()["extra"]
        workload, nemesis = r.workload, ",".join(r.nemesis)
        if ctx.get_parameter_source("time_limit") is click.core.ParameterSource.DEFAULT:
            time_limit = r.time_limit
        if ctx.get_parameter_source("interval") is click.core.ParameterSource.DEFAULT:
            interval = r.interval
        # The recipe's other settings (e.g. --nodes 4), unless given on the command line; its system options
        # under those given.
        settings = {k: v for k, v in r.settings.items() if k != "options" and not _given(ctx, k)}
        given_options = {**r.settings.get("options", {}), **cli_options}
        shown = "".join(f" --{k.replace('_', '-')} {v}" for k, v in settings.items()) + "".join(
            f" --option {k}={v}" for k, v in r.settings.get("options", {}).items() if k not in cli_options)
        click.echo(f"fencepost: --bug {bug[0]}: its recommended test: --workload {workload} --nemesis {nemesis} "
                   f"--time-limit {time_limit:g} --interval {interval:g}{shown}", err=True)
    names = [n.strip() for n in (nemesis or "").split(",") if n.strip() and n.strip() != "none"]
    config = TestConfig(system=system_name, workload=workload or default_workload(plugin), nemesis=names, nodes=nodes,
                        options=dict(given_options), backend=backend, time_limit=time_limit, concurrency=concurrency,
                        rate=rate,
                        nemesis_interval=interval, bug=list(bug), extra=extra)
    for key, value in settings.items():
        setattr(config, key, value)
    if seed is not None:
        config.seed = seed
    if nemesis is None:  # the default campaign: every fault the run can do
        from harness.mix import default_campaign

        given = frozenset({"nemesis_interval"} if _given(ctx, "interval") else set()) | frozenset(
            k for k in ("nodes", "time_limit", "concurrency", "rate") if _given(ctx, k))
        try:
            config = default_campaign(config, given)
        except registry.Refused as e:
            fail(str(e))
        click.echo(f"fencepost: the default campaign: {', '.join(config.nemesis)} (overlapping, interval "
                   f"{config.nemesis_interval:g} s, nodes {config.nodes}, workers {config.concurrency}, rate "
                   f"{config.rate:g}/s)", err=True)
    try:  # every refusal (unknown names, a fault the run cannot do) before anything starts
        from harness.launch import prepare

        prepared = prepare(config)
    except registry.Refused as e:
        fail(str(e))
    if plan:
        from harness.cli.plan import print_plan

        try:
            print_plan(config, prepared.packages)
        except ValueError as e:  # a recipe's targets the package does not have
            fail(str(e))
        return
    sys.exit(run_and_report(config, store))


def _given(ctx: click.Context, name: str) -> bool:
    return ctx.get_parameter_source(name) not in (None, click.core.ParameterSource.DEFAULT)


def why_lines(result: dict[str, object], most: int = WHY_LINES, width: int = 160) -> list[str]:
    """The first ``most`` lines of a checker's explanation, each cut to ``width`` characters: enough to see in the
    terminal (and in a CI log) why it judged as it did; the report has the rest."""
    lines = [line.strip() for line in str(result.get("explanation") or "").splitlines() if line.strip()]
    shown = [line if len(line) <= width else line[:width - 1] + "…" for line in lines[:most]]
    if len(lines) > most:
        shown.append(f"… {len(lines) - most} more line(s) in the report")
    return shown


def run_and_report(config: TestConfig, store: str) -> int:
    """Run ``config`` into the store; print the verdict and report path; return the exit code."""
    from harness.launch import run_test
    from harness.progress import ProgressDisplay

    click.echo(f"fencepost: {config.name} seed={config.seed} store={store}", err=True)
    try:
        with ProgressDisplay() as progress:
            outcome = run_test(config, store, progress=progress)
    except KeyboardInterrupt:
        click.echo("fencepost: interrupted; the cluster was torn down and the history kept", err=True)
        return ERROR
    verdict = outcome.valid
    click.echo(f"{VERDICT_WORDS.get(verdict, 'UNKNOWN')}  {config.name}  ({outcome.ok_ops} ok ops)")
    print_failing(outcome.results)
    click.echo(f"report: {outcome.report if outcome.report else outcome.run.results_json}")
    return for_validity(verdict)


def print_failing(results: dict[str, object]) -> None:
    """For each checker of ``results`` (results.json's content) that did not judge valid: its verdict, its
    error if any, and the first lines of why (:func:`why_lines`)."""
    checkers = results["checkers"]
    assert isinstance(checkers, dict)
    for name, result in checkers.items():
        if result["valid"] is not True:
            click.echo(f"  {name}: {VERDICT_WORDS.get(result['valid'], 'UNKNOWN')} {result.get('error', '')}".rstrip())
            for line in why_lines(result):
                click.echo(f"    {line}")
