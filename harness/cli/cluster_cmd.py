"""``fencepost cluster``: start, inspect and stop a local cluster of the reference system."""

from __future__ import annotations

import click

from harness.cli.errors import not_landed


@click.group()
def cluster() -> None:
    """Run the reference system by hand: up, status, down, admin."""


@cluster.command()
@click.option("--nodes", type=int, default=3, show_default=True)
@click.option("--tablets", type=int, default=4, show_default=True)
@click.option("--dir", "directory", default=".fencepost-cluster", show_default=True, help="state directory")
@click.option("--metadata", type=click.Choice(["sqlite", "etcd"]), default="sqlite", show_default=True)
def up(nodes: int, tablets: int, directory: str, metadata: str) -> None:
    """Start a local cluster on 127.0.0.N addresses and print where it is."""
    not_landed("cluster up", "the reference system issue")


@cluster.command()
@click.option("--dir", "directory", default=".fencepost-cluster", show_default=True)
def status(directory: str) -> None:
    """Report on a running local cluster."""
    not_landed("cluster status", "the reference system issue")


@cluster.command()
@click.option("--dir", "directory", default=".fencepost-cluster", show_default=True)
@click.option("--store", default=None, help="reap what killed runs under this store left behind")
@click.option("--all", "all_", is_flag=True, help="also remove docker leftovers labelled fencepost.run")
def down(directory: str, store: str | None, all_: bool) -> None:
    """Stop a cluster, or reap processes, iptables rules and mounts that killed runs left."""
    not_landed("cluster down", "the reference system issue")
