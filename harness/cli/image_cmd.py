"""``fencepost image``: build the node image for the Docker backend."""

from __future__ import annotations

import click

from harness.cli.errors import fail


@click.group()
def image() -> None:
    """Manage the Docker image the docker backend runs."""


@image.command()
@click.option("--base", default="python:3.11-slim", show_default=True, help="base image when a registry is reachable")
@click.option("--offline", is_flag=True, help="build from a debootstrap rootfs even if a registry answers")
@click.option("--force", is_flag=True, help="rebuild even if an image for the current code exists")
def build(base: str, offline: bool, force: bool) -> None:
    """Build the node image, tagged by a hash of the system's code (a no-op when it exists)."""
    from harness.backends.image import ImageBuildError, build_image

    try:
        result = build_image(base=base, offline=offline, force=force,
                             say=lambda line: click.echo(f"image: {line}", err=True))
    except ImageBuildError as e:
        fail(str(e))
    if result.built:
        click.echo(f"built {result.tag} from {result.base} in {result.seconds:.1f}s")
    else:
        click.echo(f"{result.tag} is up to date (the system's code has not changed)")
