"""The ``fencepost`` entry point: a click group whose errors all exit 3 with one line."""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import click

from harness.cli.errors import CliError
from harness.cli.exit_codes import ERROR
from harness.history.errors import HistoryError

# Subcommand name -> "module:attribute". Each lives in its own module so that adding one never
# edits another, and a slow import (Spark, matplotlib) is paid only by the command that needs it.
COMMANDS: dict[str, str] = {
    "test": "harness.cli.test_cmd:test",
    "check": "harness.cli.check_cmd:check",
    "report": "harness.cli.report_cmd:report",
    "serve": "harness.cli.serve_cmd:serve",
    "cluster": "harness.cli.cluster_cmd:cluster",
    "bench": "harness.cli.bench_cmd:bench",
    "gen-history": "harness.cli.gen_history_cmd:gen_history",
    "image": "harness.cli.image_cmd:image",
    "matrix": "harness.cli.matrix_cmd:matrix",
}


class LazyGroup(click.Group):
    """A group that imports each subcommand's module only when that subcommand runs."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        """All subcommand names, sorted."""
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """Import and return the named subcommand, or None if there is no such command."""
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        command = getattr(importlib.import_module(module_name), attr)
        assert isinstance(command, click.Command)
        return command


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
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
    except (CliError, OSError) as e:
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
