"""Turn every user-facing failure into one clear line on stderr and exit code 3."""

from __future__ import annotations

import sys
from typing import NoReturn

import click

from harness.cli.exit_codes import ERROR


class CliError(Exception):
    """An error the user can act on; its message is printed as one line and the CLI exits 3."""


def fail(message: str) -> NoReturn:
    """Print ``fencepost: error: MESSAGE`` on stderr and exit 3."""
    click.echo(f"fencepost: error: {message}", err=True)
    sys.exit(ERROR)


def not_landed(command: str, issue: str) -> NoReturn:
    """Say that a subcommand's feature has not landed yet, and exit 3."""
    fail(f"`fencepost {command}` is not available yet: it arrives with {issue}")


def require_docker_engine() -> None:
    """Exit 3 with the reason when ``--backend docker`` was asked for and no Docker engine answers."""
    from harness.backends.docker_objects import engine_unavailable

    reason = engine_unavailable()
    if reason is not None:
        fail(f"--backend docker: {reason}")
