"""Reap what a killed local run left behind: its processes, its lazy filesystems, its iptables chain.

A run writes ``RUN/cleanup.json`` as it starts processes (every pid, its cluster folder, its chain), so
``fencepost cluster down --store DIR`` can stop what a SIGKILLed harness could not.
"""

from __future__ import annotations

import json
from pathlib import Path

from harness.backends import faketime
from harness.backends.cgroups import remove_tree
from harness.backends.iptables import delete_chain
from harness.backends.lazyfs.mount import fuse_mounts_under, unmount
from harness.backends.supervisor import kill_pids, pids_mentioning


def reap_run_dir(run_dir: Path) -> list[str]:
    """Stop the processes and remove the mounts and iptables chain that a killed run under ``run_dir``
    left; say what was done.

    Processes are found both from ``cleanup.json`` and by their command line naming the run's cluster
    folder, so a process restarted after the file was written is found too.
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
        stopped = kill_pids(pids)
        for point in fuse_mounts_under(cluster_dir):
            unmount(point)
        if stopped:
            done.append(f"stopped {len(set(stopped))} process(es) of {run_dir}")
        faketime.remove_leftovers(pids)  # SIGKILLed nodes under libfaketime left these
        if data.get("cgroups"):
            remove_tree(Path(data["cgroups"]))
    chain = data.get("iptables_chain")
    if chain:
        delete_chain(chain)
        done.append(f"removed iptables chain {chain}")
    return done


def reap_store(store: Path) -> tuple[list[str], list[Path]]:
    """Reap what killed runs under ``store`` left: each run folder's processes, mounts and chain
    (:func:`reap_run_dir`), then the iptables chains named after those runs that are still there.

    Returns:
        what was done, in lines, and the run folders found (those that have a ``cleanup.json``).
    """
    from harness.backends.iptables import leftover_chains

    done: list[str] = []
    run_dirs = sorted({p.parent for p in store.rglob("cleanup.json")})
    for run_dir in run_dirs:
        done.extend(reap_run_dir(run_dir))
    names = {r.name.replace(".", "")[-20:] for r in run_dirs}
    for chain in leftover_chains():
        if any(chain.endswith(name) for name in names):
            delete_chain(chain)
            done.append(f"removed iptables chain {chain}")
    return done, run_dirs
