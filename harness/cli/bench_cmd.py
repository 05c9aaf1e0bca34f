"""``fencepost bench NAME``: run a benchmark; its output ends with one JSON line of figures."""

from __future__ import annotations

import importlib

import click

from harness.cli.errors import fail

# Benchmark name -> "module:function". The function takes the extra arguments and returns nothing;
# it prints progress and, last, one JSON line of figures.
BENCHES: dict[str, tuple[str, str]] = {
    "checker": ("checkers.bench", "the linearizability checker issue"),
    "system": ("harness.benches.system", "the reference system issue"),
    "local": ("harness.benches.local_backend", "the harness issue"),
    "spark": ("checkers.spark.bench", "the Spark issue"),
}


@click.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.argument("name", type=click.Choice(sorted(BENCHES)))
@click.option("--runs", type=int, default=3, show_default=True, help="repetitions; medians are reported")
@click.pass_context
def bench(ctx: click.Context, name: str, runs: int) -> None:
    """Run benchmark NAME. The last line of output is a JSON object of figures."""
    module_name, issue = BENCHES[name]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        if e.name is not None and module_name.startswith(e.name):
            fail(f"`fencepost bench {name}` is not available yet: it arrives with {issue}")
        raise
    module.main(runs=runs, args=list(ctx.args))
