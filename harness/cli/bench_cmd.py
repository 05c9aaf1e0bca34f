"""``fencepost bench NAME``: run a benchmark; its output ends with one JSON line of figures.

Benchmarks are plugins: each is a module named under the ``fencepost.benches`` entry-point group,
whose ``main(runs, args)`` prints progress and, last, one JSON line of figures.
"""

from __future__ import annotations

from typing import overload

import click

from harness.cli.errors import fail
from harness.registry import BENCHES, group


@overload
def bench_option(args: list[str], name: str, default: str) -> str: ...
@overload
def bench_option(args: list[str], name: str, default: None) -> str | None: ...
def bench_option(args: list[str], name: str, default: str | None) -> str | None:
    """``--name VALUE`` or ``--name=VALUE`` from a benchmark's ``args`` (the words after its name), else
    ``default``."""
    for i, a in enumerate(args):
        if a == name and i + 1 < len(args):
            return args[i + 1]
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
    return default


@click.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.argument("name")
@click.option("--runs", type=int, default=3, show_default=True, help="repetitions; medians are reported")
@click.pass_context
def bench(ctx: click.Context, name: str, runs: int) -> None:
    """Run benchmark NAME (checker, spark, local, system, ...). The last line of output is a JSON object of figures."""
    benches = group(BENCHES)
    if name not in benches:
        fail(f"unknown benchmark {name!r}; available: {', '.join(sorted(benches))}")
    benches[name].load().main(runs=runs, args=list(ctx.args))
