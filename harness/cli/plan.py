"""``fencepost test --plan``: the fault schedule a test would run, and what its campaign is made of.

Nothing starts: the schedule comes from the seed alone (:func:`harness.lifecycle.schedule_for`), so it is
the one the test would record in ``schedule.json``. For the default campaign the plan also gives each
package's and target's share of the windows (:func:`harness.mix.window_shares`): the share of a long
run's windows the mix deals that fault, every package free (a short run deals the lightest packages
less than their share). It shows how rarely a given fault comes up in a campaign of many packages. It
also lists the classics (:mod:`harness.classics`): when each is planned, which the run is too short for,
and which the run cannot do, and why.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from harness.classics import rows as classic_rows
from harness.config import TestConfig
from harness.mix import window_shares
from harness.protocols import Nemesis
from harness.schedule import ScheduledFault


def plan_summary(config: TestConfig, schedule: Sequence[ScheduledFault],
                 packages: Mapping[str, Nemesis]) -> dict[str, Any]:
    """The plan as data: the windows (as ``schedule.json`` stores them), and per package and target the
    number of windows in this schedule and, for the default campaign, the share the mix's weights give it."""
    counts = Counter((w.spec.package, w.spec.target) for w in schedule)
    mixed = bool(config.extra.get("mix"))
    shares = window_shares(packages) if mixed else {}
    faults = [{"package": p, "target": t, "windows": counts.get((p, t), 0),
               **({"share": round(shares[(p, t)], 5)} if mixed else {})}
              for p, t in sorted(set(counts) | set(shares), key=lambda pt: (-shares.get(pt, 0), -counts[pt], pt))]
    windows = [w.to_dict() for w in schedule]
    classics = {"classics": classic_rows(config.extra, windows)} if mixed else {}
    return {"test": config.name, "seed": config.seed, "time_limit": config.time_limit,
            "interval": config.nemesis_interval, "default_campaign": mixed,
            "lanes": len({w.lane for w in schedule}), "windows": windows, "faults": faults, **classics}


def print_plan(config: TestConfig, packages: Mapping[str, Nemesis]) -> None:
    """Print the test's schedule and its faults' shares as tables, then the plan as one JSON line."""
    from harness.lifecycle import schedule_for

    schedule = schedule_for(config, packages)
    plan = plan_summary(config, schedule, packages)
    out = Console(soft_wrap=True, width=160)
    out.print(f"Plan of {config.name}, seed {config.seed}, {config.time_limit:g} s: {len(schedule)} fault "
              f"windows in {plan['lanes']} lane(s); nothing was started.")
    mixed = plan["default_campaign"]
    windows = Table("at (s)", "length (s)", "lane", "package", "target", "waits for", *(["classic"] if mixed else []),
                    title="Windows")
    for w in schedule:
        windows.add_row(f"{w.at:.1f}", f"{w.duration:.1f}", str(w.lane), w.spec.package, w.spec.target,
                        w.trigger or "", *([w.classic or ""] if mixed else []))
    out.print(windows)
    if plan.get("classics"):
        print_classics(out, plan["classics"])
    faults = Table("package", "target", "windows here", *(["share of windows"] if plan["default_campaign"] else []),
                   title="Faults" + (" (share: of a long run's windows, every package free)"
                                     if plan["default_campaign"] else ""))
    for f in plan["faults"]:
        faults.add_row(f["package"], f["target"], str(f["windows"]),
                       *([f"{100 * f['share']:.2f}%"] if "share" in f else []))
    out.print(faults)
    print(json.dumps({"plan": plan}, sort_keys=True))


def print_classics(out: Console, rows: Sequence[Mapping[str, Any]]) -> None:
    """The classics as a table (each planned one's first window, or why it is left out or not offered), and a
    line counting them."""
    table = Table("classic", "what", "planned", title="Classics (every default campaign tries these first)")
    for r in rows:
        if r["status"] == "planned":
            when = f"at {float(r['at']):.1f} s: {r['package']} {r['target']}"
        else:
            when = f"{r['status']}: {r['why']}"
        table.add_row(r["classic"], r["what"], when)
    out.print(table)
    count = {s: sum(r["status"] == s for r in rows) for s in ("planned", "left out", "not offered")}
    out.print(f"Classics: {count['planned']} planned, {count['left out']} left out (the run is too short), "
              f"{count['not offered']} not offered.")
