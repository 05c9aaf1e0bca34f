"""``fencepost systems``: the installed systems under test, each with its workloads, faults and bugs (with
``--testing``, the testing systems too, such as the fake, which run only when named)."""

from __future__ import annotations

import json
from typing import Any

import click

from harness.cli.errors import fail


def describe(name: str) -> dict[str, Any]:
    """What system ``name`` offers: its description, workloads, capabilities, faults, known-unsafe modes and
    options, and each fault it is not offered with the reason (the capability it lacks, and why the system
    lacks it where the system says: :class:`harness.plugin_api.ExplainsGaps`).

    Its faults are its own packages and the generic ones whose needs it offers.
    """
    from harness import registry
    from harness.plugin_api import ExplainsGaps

    plugin = registry.load_system(name)
    gaps = dict(plugin.not_offered) if isinstance(plugin, ExplainsGaps) else {}
    faults, not_offered = [], {}
    for fault in registry.nemesis_names(plugin):
        package = registry.load_nemesis(fault, plugin)
        lacking = sorted(set(getattr(package, "needs", ())) - set(plugin.capabilities))
        if not lacking:
            faults.append(fault)
        else:
            not_offered[fault] = "; ".join(f"needs {c}" + (f": {gaps[c]}" if c in gaps else ", which the system "
                                                           "does not offer") for c in lacking)
    options = [{"name": o.name, "default": o.default, "help": o.help}
               for o in registry.system_options(plugin).values()]
    return {"name": plugin.name, "description": plugin.description, "workloads": list(plugin.workloads),
            "capabilities": sorted(plugin.capabilities), "faults": faults, "not_offered": not_offered,
            "bugs": sorted(plugin.bugs()), "options": options}


@click.command()
@click.option("--json", "as_json", is_flag=True, help="print one JSON object per system instead of text")
@click.option("--testing", is_flag=True, help="list the testing systems too (the fake: run only when named, with "
                                              "--system)")
def systems(as_json: bool, testing: bool) -> None:
    """List the installed systems under test, each with its workloads, faults and bugs."""
    from harness import registry

    names = registry.system_names()
    tools = [n for n in registry.system_names(testing=True) if n not in names]
    if not names and not (testing and tools):
        fail("no system is installed: install a plugin (a package with a fencepost.systems entry point)")
    if tools and not testing:
        click.echo(f"fencepost: testing systems not listed: {', '.join(tools)} (--testing lists them)", err=True)
    for name in [*names, *(tools if testing else [])]:
        try:
            info = describe(name)
        except Exception as e:  # one broken plugin must not hide the others
            info = {"name": name, "error": f"{type(e).__name__}: {e}"}
        if name in tools:
            info["testing"] = True
        if as_json:
            click.echo(json.dumps(info))
            continue
        if "error" in info:
            click.echo(f"{name}  (could not be loaded: {info['error']})")
            continue
        click.echo(f"{name}  {'(testing system) ' if info.get('testing') else ''}{info['description']}")
        for field in ("workloads", "capabilities", "faults", "bugs"):
            click.echo(f"  {field:<13} {', '.join(info[field]) or '-'}")
        shown = [f"{o['name']}={o['default']} ({o['help']})" if o["help"] else f"{o['name']}={o['default']}"
                 for o in info["options"]]
        click.echo(f"  {'options':<13} {', '.join(shown) or '-'}")
        for fault, why in info["not_offered"].items():
            click.echo(f"  {'not offered':<13} {fault} ({why})")
