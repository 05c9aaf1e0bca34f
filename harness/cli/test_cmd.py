"""``fencepost test``: run a fault campaign against the reference system."""

from __future__ import annotations

import click

from harness.cli.errors import not_landed


@click.command()
@click.option("--workload", "-w", default=None, help="register, log, set or bank")
@click.option("--nemesis", "-n", default=None, help="comma-separated fault packages: partition,kill,pause,wipe,...")
@click.option("--nodes", type=int, default=3, show_default=True, help="number of data nodes")
@click.option("--time-limit", type=float, default=30.0, show_default=True, help="seconds of workload")
@click.option("--concurrency", type=int, default=10, show_default=True, help="client processes")
@click.option("--rate", type=float, default=100.0, show_default=True, help="target ops per second")
@click.option("--seed", type=int, default=None, help="seed for generators and the nemesis schedule")
@click.option("--backend", type=click.Choice(["local", "docker"]), default="local", show_default=True)
@click.option("--store", default="store", show_default=True, help="run store directory")
@click.option("--bug", default=None, help="inject a named bug into the system (see --list-bugs)")
@click.option("--list-bugs", is_flag=True, help="print the injectable bugs and exit")
def test(**_: object) -> None:
    """Run a test: set up, drive clients and faults, heal, check, report. Exits 0/1/2/3."""
    not_landed("test", "the harness issue")
