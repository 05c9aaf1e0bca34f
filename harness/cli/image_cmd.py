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
@click.option("--system", "system_name", default=None,
              help="the system whose code the image carries (`fencepost systems`; default: as `fencepost test` "
                   "chooses it)")
def build(base: str, offline: bool, force: bool, system_name: str | None) -> None:
    """Build a system's node image, tagged by a hash of its code (a no-op when it exists)."""
    from harness import registry
    from harness.backends.image import ImageBuildError, build_image
    from harness.plugin_api import HasCode, ImagePackages

    try:
        plugin = registry.load_system(system_name)
    except registry.Refused as e:
        fail(str(e))
    code = plugin.code() if isinstance(plugin, HasCode) else {}
    packages = plugin.image_packages() if isinstance(plugin, ImagePackages) else ()
    try:
        result = build_image(code, base=base, offline=offline, force=force, packages=packages,
                             say=lambda line: click.echo(f"image: {line}", err=True))
    except ImageBuildError as e:
        fail(str(e))
    if result.built:
        click.echo(f"built {result.tag} from {result.base} in {result.seconds:.1f}s")
    else:
        click.echo(f"{result.tag} is up to date (the system's code has not changed)")
