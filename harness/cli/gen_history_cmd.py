"""``fencepost gen-history``: write a synthetic history for tests and benchmarks."""

from __future__ import annotations

import click

from harness.cli.errors import not_landed


@click.command("gen-history")
@click.option("--ops", type=int, required=True)
@click.option("--out", required=True)
def gen_history(ops: int, out: str) -> None:
    """Write a generated history of OPS operations to OUT."""
    not_landed("gen-history", "the linearizability checker issue")
