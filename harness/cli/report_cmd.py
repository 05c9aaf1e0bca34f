"""``fencepost report``: render a run directory's HTML report again."""

from __future__ import annotations

import click

from harness.cli.errors import not_landed


@click.command()
@click.argument("run_dir", type=click.Path(file_okay=False))
def report(run_dir: str) -> None:
    """Render RUN_DIR/report.html again from the run's stored files."""
    not_landed("report", "the report issue")
