"""``fencepost cluster``: start, inspect and stop a local cluster of the reference system."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import click

from fencepost import docker_unavailable, fail, reap_docker
from fencepost import reap_store as reap_runs


@click.group()
def cluster() -> None:
    """Run the reference system by hand: up, status, down, admin."""


def _description(directory: str) -> dict[str, Any]:
    from system import statefile

    desc = statefile.read_json(os.path.join(directory, "cluster.json"))
    if desc is None:
        fail(f"no cluster in {directory} (no cluster.json); start one with `fencepost cluster up --dir {directory}`")
    return dict(desc)


def _running(desc: dict[str, Any]) -> list[int]:
    from system.launcher import is_cluster_process

    procs = [*desc["nodes"].values(), *desc["operators"].values(), desc.get("master") or {}]
    return [p["pid"] for p in procs if p.get("pid") and is_cluster_process(p["pid"])]


@cluster.command()
@click.option("--nodes", type=int, default=3, show_default=True)
@click.option("--tablets", type=int, default=4, show_default=True)
@click.option("--dir", "directory", default=".fencepost-cluster", show_default=True, help="state directory")
@click.option("--metadata", type=click.Choice(["sqlite", "etcd"]), default="sqlite", show_default=True)
@click.option("--replication", type=int, default=3, show_default=True)
@click.option("--bug", "bugs", multiple=True, help="inject a protocol bug (see system/bugs.py); repeatable")
def up(nodes: int, tablets: int, directory: str, metadata: str, replication: int, bugs: tuple[str, ...]) -> None:
    """Start a local cluster on 127.0.0.N addresses and print where it is."""
    from system.bugs import BUGS
    from system.launcher import Cluster

    if not 1 <= nodes <= 200 or tablets < 1:
        fail("--nodes must be 1..200 and --tablets at least 1")
    unknown = sorted(set(bugs) - set(BUGS))
    if unknown:
        fail(f"unknown bug(s) {', '.join(unknown)}; known: {', '.join(sorted(BUGS))}")
    path = os.path.abspath(directory)
    if os.path.exists(os.path.join(path, "cluster.json")) and _running(_description(path)):
        fail(f"a cluster is already running in {path}; stop it with `fencepost cluster down --dir {directory}`")
    try:
        c = Cluster.start(path, nodes=nodes, tablets=tablets, replication=replication, metadata=metadata,
                          bugs=bugs, detach=True)
    except FileNotFoundError as e:
        fail(str(e))
    try:
        c.wait_ready(60.0)
    except TimeoutError as e:
        c.stop()
        fail(f"cluster did not become ready: {e}")
    desc = c.description()
    for n, d in desc["nodes"].items():
        click.echo(f"node {n}  {d['host']}:{d['port']}  uuid {d['uuid']}  pid {d['pid']}")
    for o, d in desc["operators"].items():
        click.echo(f"operator {o}  {d['host']}:{d['port']}  pid {d['pid']}")
    click.echo(f"metadata {desc['metadata']}  tablets {tablets}  replication {c.replication}")
    click.echo(f"description: {os.path.join(path, 'cluster.json')}")


@cluster.command()
@click.option("--dir", "directory", default=".fencepost-cluster", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="print one JSON object instead of text")
def status(directory: str, as_json: bool) -> None:
    """Report on a running local cluster."""
    from system.admin import call_sync

    desc = _description(os.path.abspath(directory))
    nodes: dict[str, Any] = {}
    for n, d in desc["nodes"].items():
        try:
            hello = call_sync(d["host"], d["port"], "hello", {}, timeout=2.0)
            nodes[n] = {"up": True, "tablets": hello["tablets"]}
        except Exception as e:
            nodes[n] = {"up": False, "error": str(e) or type(e).__name__}
    routing = None
    for d in desc["operators"].values():
        try:
            routing = call_sync(d["host"], d["port"], "routing", {}, timeout=2.0)
            break
        except Exception:
            continue
    if as_json:
        click.echo(json.dumps({"nodes": nodes, "routing": routing}, sort_keys=True))
        return
    for n, info in nodes.items():
        if not info["up"]:
            click.echo(f"node {n}: DOWN ({info['error']})")
            continue
        parts = [f"t{t}={s['status']}@{s['epoch']} head={s['head']} commit={s['commit']}"
                 for t, s in sorted(info["tablets"].items(), key=lambda kv: int(kv[0]))]
        click.echo(f"node {n}: up  " + "  ".join(parts))
    if routing is None:
        click.echo("operators: none answering")
    else:
        for t, m in sorted(routing["tablets"].items(), key=lambda kv: int(kv[0])):
            click.echo(f"tablet {t}: {m['status']} leader={m['leader']} epoch={m['epoch']} "
                       f"ensemble={','.join(m['ensemble'])}")


@cluster.command()
@click.option("--dir", "directory", default=".fencepost-cluster", show_default=True)
@click.option("--store", default=None, help="reap what killed runs under this store left behind")
@click.option("--all", "all_", is_flag=True,
              help="also remove docker leftovers labelled fencepost.run (with --store: only that store's runs)")
def down(directory: str, store: str | None, all_: bool) -> None:
    """Stop a cluster, or reap processes, iptables rules and mounts that killed runs left."""
    from system.launcher import stop_from_file

    if all_:
        reason = docker_unavailable()
        if reason is not None:
            fail(f"--all: {reason}")
        if store is None:  # every run's leftovers
            runs: list[str | None] = [None]
        else:  # only the docker runs recorded under the store, so runs elsewhere are left alone
            runs = sorted({json.loads(p.read_text()).get("docker_run") for p in Path(store).rglob("cleanup.json")}
                          - {None})
        counts = {"containers": 0, "networks": 0, "volumes": 0}
        for run_id in runs:
            for kind, n in reap_docker(run_id).items():
                counts[kind] += n
        click.echo(f"removed {counts['containers']} container(s), {counts['networks']} network(s) and "
                   f"{counts['volumes']} volume(s) labelled fencepost.run")
        if store is None:
            return
    if store is not None:
        reap_store(Path(store))
        return
    d = os.path.abspath(directory)
    if not os.path.exists(os.path.join(d, "cluster.json")):
        fail(f"no cluster in {d} (no cluster.json)")
    pids = stop_from_file(d)
    click.echo(f"stopped {len(pids)} process(es) of the cluster in {d}")


def reap_store(store: Path) -> None:
    """Stop every process and remove every iptables chain that runs under ``store`` left behind, and stop
    the clusters started there by hand (``cluster up --dir`` inside the store)."""
    from system.launcher import stop_from_file

    if not store.is_dir():
        fail(f"no store directory {store}")
    lines, run_dirs = reap_runs(store)
    for line in lines:
        click.echo(line)
    reaped = len(lines)
    # Clusters started outside a run (e.g. `cluster up --dir` inside the store) have only cluster.json.
    covered = {str(r) for r in run_dirs}
    for desc in sorted(store.rglob("cluster.json")):
        if not any(str(desc).startswith(c + os.sep) for c in covered):
            pids = stop_from_file(str(desc.parent))
            if pids:
                click.echo(f"stopped {len(pids)} process(es) of the cluster in {desc.parent}")
                reaped += 1
    if not reaped:
        click.echo(f"nothing left running under {store}")


@cluster.group()
def admin() -> None:
    """The master's admin API: replicas, replica counts, node retirement, migrations."""


def _admin_call(directory: str, method: str, params: dict[str, Any]) -> None:
    from system import statefile
    from system.admin import call_sync, master_admin
    from system.wire import RpcError

    desc = _description(os.path.abspath(directory))
    m = desc.get("master")
    if not m:
        fail(f"the cluster in {directory} runs no master")
    try:
        if method == "status":
            out = call_sync(m["host"], m["port"], "status", {}, timeout=5.0)
        else:
            token = (statefile.read_json(m["secret"]) or {}).get("token")
            out = master_admin(m["host"], m["port"], method, params, token)
    except RpcError as e:
        fail(f"{method.replace('_', '-')} refused: {e.code}: {e.message}")
    except Exception as e:
        fail(f"master at {m['host']}:{m['port']} did not answer: {e}")
    click.echo(json.dumps(out, sort_keys=True, indent=1))


_DIR = click.option("--dir", "directory", default=".fencepost-cluster", show_default=True)
_TABLET = click.option("--tablet", type=int, required=True)
_CONFIG = click.option("--config-id", type=int, default=None,
                       help="the committed config id you decided on (default: read it now)")


@admin.command("status")
@_DIR
def admin_status(directory: str) -> None:
    """Members and their states; per tablet the up, acting and stray sets, migration and config id."""
    _admin_call(directory, "status", {})


@admin.command("add-replica")
@_DIR
@_TABLET
@click.option("--node", required=True)
@_CONFIG
def add_replica(directory: str, tablet: int, node: str, config_id: int | None) -> None:
    """Add a replica of a tablet on a node."""
    _admin_call(directory, "add_replica", {"tablet": tablet, "node": node, "config_id": config_id})


@admin.command("remove-replica")
@_DIR
@_TABLET
@click.option("--node", required=True)
@_CONFIG
def remove_replica(directory: str, tablet: int, node: str, config_id: int | None) -> None:
    """Remove a tablet's replica from a node."""
    _admin_call(directory, "remove_replica", {"tablet": tablet, "node": node, "config_id": config_id})


@admin.command("move-replica")
@_DIR
@_TABLET
@click.option("--from", "src", required=True)
@click.option("--to", "dst", required=True)
@_CONFIG
def move_replica(directory: str, tablet: int, src: str, dst: str, config_id: int | None) -> None:
    """Move a tablet's replica from one node to another (add, backfill, promote, contract)."""
    _admin_call(directory, "move_replica", {"tablet": tablet, "from": src, "to": dst, "config_id": config_id})


@admin.command("change-replica-count")
@_DIR
@_TABLET
@click.option("--count", type=int, required=True)
@_CONFIG
def change_replica_count(directory: str, tablet: int, count: int, config_id: int | None) -> None:
    """Set how many replicas a tablet should have."""
    _admin_call(directory, "change_replica_count", {"tablet": tablet, "count": count, "config_id": config_id})


@admin.command("cancel-migration")
@_DIR
@_TABLET
@_CONFIG
def cancel_migration(directory: str, tablet: int, config_id: int | None) -> None:
    """Cancel a tablet's migration: its up set goes back to its acting set."""
    _admin_call(directory, "cancel_migration", {"tablet": tablet, "config_id": config_id})


@admin.command("retire-node")
@_DIR
@click.option("--node", required=True)
def retire_node(directory: str, node: str) -> None:
    """Decommission a node: its replicas move away, then it is left."""
    _admin_call(directory, "retire_node", {"node": node})
