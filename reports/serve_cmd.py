"""``fencepost serve``: browse the run store on 127.0.0.1."""

from __future__ import annotations

import errno
from pathlib import Path

import click

from harness.cli.errors import fail


@click.command()
@click.option("--store", default="store", show_default=True, help="run store directory")
@click.option("--port", type=click.IntRange(0, 65535), default=8080, show_default=True, help="0 picks a free port")
def serve(store: str, port: int) -> None:
    """Serve the run store's reports and index of runs on 127.0.0.1:PORT until interrupted."""
    if not Path(store).is_dir():
        fail(f"{store}: no such store directory")
    from reports.server import StoreServer

    try:
        server = StoreServer(store, port)
    except OSError as e:
        if e.errno == errno.EADDRINUSE:
            fail(f"port {port} on 127.0.0.1 is already in use (pick another with --port)")
        raise
    click.echo(f"fencepost: serving {store} at {server.url} (Ctrl-C to stop)", err=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        click.echo("fencepost: stopped", err=True)
    finally:
        server.server_close()
