"""``fencepost serve``: browse the run store on 127.0.0.1."""

from __future__ import annotations

import click

from harness.cli.errors import not_landed


@click.command()
@click.option("--store", default="store", show_default=True, help="run store directory")
@click.option("--port", type=int, default=8080, show_default=True)
def serve(store: str, port: int) -> None:
    """Serve the run store's reports and index of runs on 127.0.0.1:PORT."""
    not_landed("serve", "the report issue")
