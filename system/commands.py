"""The command lines of the reference system's processes, in one place for every launcher.

:mod:`system.launcher` (the system's own local launcher) and Fencepost's adapter for the system (which
hands them to a backend, local processes or containers) both build their processes from these, so a
new flag is added once. Addresses, ports and paths are the caller's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def _bug_args(bugs: Sequence[str]) -> list[str]:
    return [a for b in bugs for a in ("--bug", b)]


def master_argv(python: str, *, metadata: str, cluster_file: str, host: str, port: int, data: str,
                replication: int, dead_after: float, bugs: Sequence[str] = ()) -> list[str]:
    """The master: the cluster's membership and placement policy."""
    return [python, "-m", "system.master", "--metadata", metadata, "--cluster-file", cluster_file, "--host", host,
            "--port", str(port), "--data", data, "--replication", str(replication), "--dead-after", f"{dead_after:g}",
            *_bug_args(bugs)]


def node_argv(python: str, *, node_id: str, host: str, port: int, data: str, master: tuple[str, int] | None,
              cluster_file: str | None, bugs: Sequence[str] = ()) -> list[str]:
    """A data node (joins ``master`` with the cluster file's token when there is a master)."""
    join = ["--master", f"{master[0]}:{master[1]}", "--cluster-file", str(cluster_file)] if master else []
    return [python, "-m", "system.node", "--id", node_id, "--host", host, "--port", str(port), "--data", data,
            *join, *_bug_args(bugs)]


def operator_argv(python: str, *, operator_id: str, metadata: str, nodes: Mapping[str, tuple[str, int]],
                  tablets: int, replication: int, host: str, port: int, data: str, stall_timeout: float,
                  bugs: Sequence[str] = (), extra: Sequence[str] = ()) -> list[str]:
    """An operator: elections and reconfigurations for the nodes it is given."""
    node_spec = ",".join(f"{n}={h}:{p}" for n, (h, p) in nodes.items())
    return [python, "-m", "system.operator", "--id", operator_id, "--metadata", metadata, "--nodes", node_spec,
            "--tablets", str(tablets), "--replication", str(replication), "--host", host, "--port", str(port),
            "--data", data, "--stall-timeout", f"{stall_timeout:g}", *_bug_args(bugs), *extra]


def etcd_argv(binary: str, *, name: str, data: str, host: str, client_port: int, peer_port: int) -> list[str]:
    """A single-member etcd server for the metadata store."""
    url, peer = f"http://{host}:{client_port}", f"http://{host}:{peer_port}"
    return [binary, "--name", name, "--data-dir", data, "--listen-client-urls", url, "--advertise-client-urls", url,
            "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer, "--initial-cluster", f"{name}={peer}"]
