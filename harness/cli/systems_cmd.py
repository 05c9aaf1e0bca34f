"""``fencepost systems``: the installed systems under test, each with its workloads, faults and bugs."""

from __future__ import annotations

import json
from typing import Any

import click

from harness.cli.errors import fail


def describe(name: str) -> dict[str, Any]:
    """What system ``name`` offers: its description, workloads, capabilities, faults and known-unsafe modes.

    Its faults are its own packages and the generic ones whose needs it offers.
    """
    from harness import registry

    plugin = registry.load_system(name)
    faults = []
    for fault in registry.nemesis_names(plugin):
        package = registry.load_nemesis(fault, plugin)
        if set(getattr(package, "needs", ())) <= set(plugin.capabilities):
            faults.append(fault)
    options = [{"name": o.name, "default": o.default, "help": o.help}
               for o in registry.system_options(plugin).values()]
    return {"name": plugin.name, "description": plugin.description, "workloads": list(plugin.workloads),
            "capabilities": sorted(plugin.capabilities), "faults": faults, "bugs": sorted(plugin.bugs()),
            "options": options}


@click.command()
@click.option("--json", "as_json", is_flag=True, help="print one JSON object per system instead of text")
def systems(as_json: bool) -> None:
    """List the installed systems under test, each with its workloads, faults and bugs."""
    from harness import registry

    names = registry.system_names()
    if not names:
        fail("no system is installed: install a plugin (a package with a fencepost.systems entry point)")
    for name in names:
        try:
            info = describe(name)
        except Exception as e:  # one broken plugin must not hide the others
            info = {"name": name, "error": f"{type(e).__name__}: {e}"}
        if as_json:
            click.echo(json.dumps(info))
            continue
        if "error" in info:
            click.echo(f"{name}  (could not be loaded: {info['error']})")
            continue
        click.echo(f"{name}  {info['description']}")
        for field in ("workloads", "capabilities", "faults", "bugs"):
            click.echo(f"  {field:<13} {', '.join(info[field]) or '-'}")
        shown = [f"{o['name']}={o['default']} ({o['help']})" if o["help"] else f"{o['name']}={o['default']}"
                 for o in info["options"]]
        click.echo(f"  {'options':<13} {', '.join(shown) or '-'}")
