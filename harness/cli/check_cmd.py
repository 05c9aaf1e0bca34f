"""``fencepost check``: check recorded histories."""

from __future__ import annotations

import click

from harness.cli.errors import not_landed


@click.command()
@click.argument("paths", nargs=-1, required=True)
def check(paths: tuple[str, ...]) -> None:
    """Check histories at PATHS."""
    not_landed("check", "the linearizability checker issue")
