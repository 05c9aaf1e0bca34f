"""A process's observation files (its event log) outlive an erase of its data.

A system names the files under a process's data directory that record what it saw rather than its state
(:attr:`harness.plugin_api.ProcessSpec.observations`): disk faults leave them alone. An erase gives the
node a new, empty disk, so before it the backend keeps what those files held under the cluster
directory, and the run's collection puts the kept part in front of what the process wrote afterwards.
Checkers then read one log per process across its wipes, as they expect (a ``node_started`` with a new
UUID marks each wiped disk).
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path

KEPT_DIR = "observed-before-erase"
"""Where, under the cluster directory, the erased parts of observation files are kept."""
_taken = itertools.count()


def kept_path(cluster_dir: Path, node: str, observed: str) -> Path:
    """The file that keeps the erased parts of ``node``'s observation file ``observed``."""
    return cluster_dir / KEPT_DIR / node / Path(observed).name


def keep(cluster_dir: Path, node: str, observed: str, data: bytes | None) -> None:
    """Append what ``node``'s observation file held before an erase to its kept part (one line ends it:
    a process killed in the middle of a line leaves that line torn, never joined to the next one)."""
    if not data:
        return
    path = kept_path(cluster_dir, node, observed)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("ab") as f:
        f.write(data if data.endswith(b"\n") else data + b"\n")


def take(cluster_dir: Path, node: str, observed: str, source: Path) -> None:
    """Move ``node``'s observation file at ``source`` into its kept part, once.

    The file is renamed away before it is read, so of two erases of one node that overlap (a wipe
    cancelled at the run's end while its erase still ran in a thread, and the membership heal's wipe of the
    same node) only one keeps it; read and kept by both, every line before the erase was in the log twice,
    and the amnesia checker saw the node go back from its last epoch to its first.
    """
    staged = source.with_name(f"{source.name}.erasing-{os.getpid()}-{next(_taken)}")
    try:
        os.replace(source, staged)
    except FileNotFoundError:
        return
    keep(cluster_dir, node, observed, staged.read_bytes())
    staged.unlink()


def whole(cluster_dir: Path, node: str, observed: str, current: bytes | None) -> bytes | None:
    """The observation file across every erase: its kept parts, then ``current`` (None when neither exists)."""
    path = kept_path(cluster_dir, node, observed)
    if not path.is_file():
        return current
    return path.read_bytes() + (current or b"")
