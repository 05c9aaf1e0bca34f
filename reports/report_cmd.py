"""``fencepost report``: render a run directory's HTML report again."""

from __future__ import annotations

from pathlib import Path

import click

from harness.cli.errors import fail


@click.command()
@click.argument("run_dir", type=click.Path(file_okay=False))
@click.option("--no-draw", is_flag=True, help="do not draw plots or the timeline that the stored results lack")
def report(run_dir: str, no_draw: bool) -> None:
    """Render RUN_DIR/report.html again from the run's stored files.

    RUN_DIR is one run's folder (STORE/<test>/<time>), or a store, meaning its latest run. Missing or old pieces are
    shown as notes, never an error. Prints the report's path.
    """
    path = Path(run_dir)
    if not path.is_dir():
        fail(f"{run_dir}: no such run directory")
    if not (path / "test.json").exists() and (path / "latest" / "test.json").exists():
        path = path / "latest"  # a store: its newest run
    if not (path / "test.json").exists() and not (path / "history.jsonl").exists():
        fail(f"{run_dir}: not a run directory (it holds neither test.json nor history.jsonl)")
    from reports.render import write_report

    click.echo(str(write_report(path, draw=not no_draw)))
