"""The ``fencepost`` entry point: a click group whose subcommands are plugins, and whose errors exit 3 in one line.

Every subcommand is a click command named under the ``fencepost.commands`` entry-point group (the
harness's own, the checker's ``check``, the reports' ``report`` and ``serve``, a system's ``cluster``),
imported only when it runs, so a slow import (Spark, matplotlib) is paid only by the command that needs
it and adding a command never edits this file.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from harness.cli.errors import CliError
from harness.cli.exit_codes import ERROR
from harness.history.errors import HistoryError
from harness.registry import COMMANDS, Refused, group


class PluginGroup(click.Group):
    """A group whose subcommands are the installed ``fencepost.commands`` entry points, imported lazily."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        """All subcommand names, sorted."""
        return sorted(group(COMMANDS))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """Import and return the named subcommand, or None if there is no such command."""
        ep = group(COMMANDS).get(cmd_name)
        if ep is None:
            return None
        command = ep.load()
        assert isinstance(command, click.Command), f"entry point {ep.value} is not a click command"
        return command


@click.group(cls=PluginGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="fencepost")
def cli() -> None:
    """Fencepost: Jepsen-style fault campaigns, linearizability and amnesia checking.

    Exit codes for `test` and `check`: 0 valid, 1 anomalies found, 2 unknown, 3 error.
    """


def main(argv: list[str] | None = None) -> Any:
    """Run the CLI. Usage errors, bad input and crashes all exit 3 with a one-line message."""
    try:
        return cli.main(args=argv, prog_name="fencepost", standalone_mode=False)
    except click.exceptions.Exit as e:
        sys.exit(e.exit_code)
    except click.exceptions.Abort:
        click.echo("fencepost: interrupted", err=True)
        sys.exit(ERROR)
    except click.UsageError as e:
        hint = f" (see `{e.ctx.command_path} --help`)" if e.ctx is not None else ""
        click.echo(f"fencepost: error: {e.format_message()}{hint}", err=True)
        sys.exit(ERROR)
    except click.ClickException as e:
        click.echo(f"fencepost: error: {e.format_message()}", err=True)
        sys.exit(ERROR)
    except HistoryError as e:
        for problem in e.problems:
            click.echo(f"fencepost: error: {problem}", err=True)
        sys.exit(ERROR)
    except (CliError, OSError, Refused) as e:
        click.echo(f"fencepost: error: {e}", err=True)
        sys.exit(ERROR)
    except KeyboardInterrupt:
        click.echo("fencepost: interrupted", err=True)
        sys.exit(ERROR)
    except Exception as e:
        if os.environ.get("FENCEPOST_DEBUG"):
            raise
        click.echo(f"fencepost: internal error: {type(e).__name__}: {e} (set FENCEPOST_DEBUG=1 for a traceback)",
                   err=True)
        sys.exit(ERROR)


if __name__ == "__main__":
    main()
