"""``fencepost image``: build the node image for the Docker backend."""

from __future__ import annotations

import click

from harness.cli.errors import not_landed


@click.group()
def image() -> None:
    """Manage the Docker image the docker backend runs."""


@image.command()
@click.option("--base", default="python:3.11-slim", show_default=True, help="base image when a registry is reachable")
@click.option("--offline", is_flag=True, help="build from a debootstrap rootfs even if a registry answers")
def build(base: str, offline: bool) -> None:
    """Build the node image, tagged by a hash of the system's code."""
    not_landed("image build", "the Docker backend issue")
