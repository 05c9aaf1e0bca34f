"""Reap what a killed local run left: its processes, its lazy filesystems, its iptables chain, its cgroups.

A run writes ``RUN/cleanup.json`` as it starts processes (every pid, its cluster folder, its chain, and the
harness's own pid and start time), and marks it torn down when it ends. The next local run in the same
store reaps every run whose harness is gone without having torn down (:func:`reap_abandoned`), and
``fencepost cluster down --store DIR`` reaps them all.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from harness.backends import faketime
from harness.backends.cgroups import BASE, kill_tree, remove_tree, thaw_tree
from harness.backends.iptables import delete_chain
from harness.backends.lazyfs.mount import fuse_mounts_under, unmount
from harness.backends.supervisor import kill_pids, pids_mentioning


def _start_ticks(pid: int) -> int | None:
    """When process ``pid`` started, in clock ticks since boot (``/proc/PID/stat`` field 22), or None."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[19])  # the fields after the command's closing parenthesis


def harness_identity() -> dict[str, int | None]:
    """This harness process, as ``cleanup.json`` records it: its pid and when it started (a reused pid is
    another process)."""
    return {"pid": os.getpid(), "start": _start_ticks(os.getpid())}


def harness_alive(identity: dict[str, Any]) -> bool:
    """Whether the harness ``identity`` names still runs."""
    pid = identity.get("pid")
    return isinstance(pid, int) and _start_ticks(pid) == identity.get("start") is not None


def reap_abandoned(store: Path) -> list[str]:
    """Reap each run under ``store`` whose harness is gone without tearing its cluster down (SIGKILLed);
    mark it torn down, and say what was done. Runs whose harness still runs, and those written before
    harnesses were recorded, are left alone (``fencepost cluster down --store`` reaps those)."""
    done: list[str] = []
    for cleanup in sorted(store.glob("*/*/cleanup.json")):  # STORE/<test name>/<time>/cleanup.json
        try:
            data = json.loads(cleanup.read_text())
        except (OSError, ValueError):
            continue
        identity = data.get("harness")
        if data.get("torn_down") or not isinstance(identity, dict) or harness_alive(identity):
            continue
        done.extend(reap_run_dir(cleanup.parent))
        data["torn_down"] = True
        tmp = cleanup.with_name(".cleanup.json.reaped")
        tmp.write_text(json.dumps(data) + "\n")
        os.replace(tmp, cleanup)
    return done


def reap_run_dir(run_dir: Path) -> list[str]:
    """Stop the processes and remove the mounts and iptables chain that a killed run under ``run_dir``
    left; say what was done.

    Processes are found both from ``cleanup.json`` and by their command line naming the run's cluster
    folder, so a process restarted after the file was written is found too; then whatever is still in the
    run's cgroups is killed (children that left their process group, which neither names), frozen or not,
    and the cgroups are removed.
    """
    done: list[str] = []
    cleanup = run_dir / "cleanup.json"
    if not cleanup.exists():
        return done
    try:
        data = json.loads(cleanup.read_text())
    except ValueError:
        return [f"{cleanup} could not be read"]
    cluster_dir = data.get("cluster_dir")
    if cluster_dir:
        recorded = {int(pid): str(cmd) for pid, cmd in (data.get("pids") or {}).items()}
        pids = {**recorded, **pids_mentioning(cluster_dir)}  # lazy filesystems and restarts name the folder
        groups = Path(data["cgroups"]) if data.get("cgroups") else None
        if groups is not None and groups.parent.name != BASE:  # only ever a run's own tree (fencepost/<run>)
            groups = None
        if groups is not None:  # a paused (frozen) process takes no SIGTERM
            thaw_tree(groups)
        stopped = kill_pids(pids)
        # What no pid names: children that left their process group (and their command line) and restarts.
        left = kill_tree(groups) if groups is not None else []
        for point in fuse_mounts_under(cluster_dir):
            unmount(point)
        inside = Path(cluster_dir).resolve()
        discard = [Path(p) for p in data.get("discard") or [] if Path(p).resolve().is_relative_to(inside)]
        for path in discard:  # data the system asked not to keep (ProcessSpec.discard_data)
            shutil.rmtree(path, ignore_errors=True)
        if discard and not any(p.exists() for p in discard):
            done.append(f"removed {len(discard)} data folder(s) of {run_dir}")
        if stopped:
            done.append(f"stopped {len(set(stopped))} process(es) of {run_dir}")
        if left:
            done.append(f"killed {len(set(left))} process(es) left in the cgroups of {run_dir}")
        faketime.remove_leftovers(pids)  # SIGKILLed nodes under libfaketime left these
        if groups is not None:
            remove_tree(groups)
    chain = data.get("iptables_chain")
    if chain:
        delete_chain(chain)
        done.append(f"removed iptables chain {chain}")
    return done


def reap_store(store: Path) -> tuple[list[str], list[Path]]:
    """Reap what killed runs under ``store`` left: each run folder's processes, mounts and chain
    (:func:`reap_run_dir`), then the iptables chains named after those runs that are still there, and every
    chain whose owning harness is gone.

    Returns:
        what was done, in lines, and the run folders found (those that have a ``cleanup.json``).
    """
    from harness.backends.iptables import leftover_chains, reap_dead_chains

    done: list[str] = []
    run_dirs = sorted({p.parent for p in store.rglob("cleanup.json")})
    for run_dir in run_dirs:
        done.extend(reap_run_dir(run_dir))
    names = {r.name.replace(".", "")[-20:] for r in run_dirs}
    for chain in leftover_chains():
        if any(chain.endswith(name) for name in names):
            delete_chain(chain)
            done.append(f"removed iptables chain {chain}")
    # Chains a fault package made under a name of its own (PostgreSQL's client-partition), whose harness is gone.
    done.extend(f"removed iptables chain {chain}" for chain in reap_dead_chains())
    return done, run_dirs
