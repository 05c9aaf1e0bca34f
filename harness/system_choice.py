"""Which system a command runs when none is named: the framework names none of its own.

In order: the ``FENCEPOST_SYSTEM`` environment variable; ``system`` under ``[tool.fencepost]`` in the
nearest ``pyproject.toml`` (from the working directory up, as pytest and ruff find theirs); else the only
installed system. With several installed and none chosen, the error lists them and says how to choose.

Testing systems (the ``fencepost.testing_systems`` entry points: :class:`harness.testing.fake.FakeSystem`) run
when named, but are never chosen, counted or listed as installed systems here.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping, Sequence
from importlib.metadata import entry_points
from pathlib import Path

ENV = "FENCEPOST_SYSTEM"
"""The environment variable that names the system."""
SYSTEMS_GROUP = "fencepost.systems"
TESTING_SYSTEMS_GROUP = "fencepost.testing_systems"
"""Systems for testing Fencepost and plugins (the fake): run by name only, never the default."""


class NoSystemChosen(ValueError):
    """No system was named and none can be chosen; the message says why in one line and how to choose."""


def installed_systems() -> list[str]:
    """The names of the installed systems (the ``fencepost.systems`` entry points), sorted."""
    return sorted({ep.name for ep in entry_points(group=SYSTEMS_GROUP)})


def installed_testing_systems() -> list[str]:
    """The names of the installed testing systems (the ``fencepost.testing_systems`` entry points), sorted."""
    return sorted({ep.name for ep in entry_points(group=TESTING_SYSTEMS_GROUP)})


def configured_system(start: Path) -> str | None:
    """``[tool.fencepost] system`` of the nearest ``pyproject.toml`` at or above ``start``, or None (also when
    the nearest one does not set it, or cannot be read)."""
    for folder in (start, *start.parents):
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file():
            try:
                data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                return None
            value = data.get("tool", {}).get("fencepost", {}).get("system")
            return str(value) if value else None
    return None


def default_system(installed: Sequence[str] | None = None, *, cwd: Path | None = None,
                   environ: Mapping[str, str] | None = None) -> str:
    """The system to run when none is named (see the module's docstring for the order).

    Args:
        installed: the installed systems (default: the entry points).
        cwd: where to start looking for ``pyproject.toml`` (default: the working directory).
        environ: the environment (default: ``os.environ``).

    Raises:
        NoSystemChosen: none is configured and not exactly one is installed.
    """
    env = (os.environ if environ is None else environ).get(ENV, "").strip()
    if env:
        return env
    configured = configured_system(Path.cwd() if cwd is None else cwd)
    if configured:
        return configured
    names = installed_systems() if installed is None else sorted(installed)
    if len(names) == 1:
        return names[0]
    if not names:
        raise NoSystemChosen("no system is installed: install a plugin (a package with a fencepost.systems "
                             "entry point)")
    raise NoSystemChosen(f"{len(names)} systems are installed ({', '.join(names)}) and none is chosen: pass "
                         f"--system, set {ENV}, or set system under [tool.fencepost] in pyproject.toml")
