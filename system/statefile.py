"""Small JSON files written atomically: temp file, fsync, rename, fsync of the directory.

:func:`write_consensus_meta` is the one place a data node persists its consensus metadata (``state.json``:
epoch, status, head, commit, leader); bug ``metadata-no-fsync`` breaks its durability there.
"""

from __future__ import annotations

import json
import os
import threading
from typing import Any

from system import bugs


def write_atomic(path: str, obj: Any, durable: bool = True) -> None:
    """Replace ``path`` with ``obj`` as JSON so that a crash leaves either the old or the new file.

    With ``durable=False`` neither the file nor its directory is fsynced: a power loss may then bring
    back an older file, or leave an empty one.
    """
    directory = os.path.dirname(os.path.abspath(path))
    # One temp file per writer: two threads replacing the same file (a checkpoint and a tombstone) must
    # not truncate or rename each other's temp file.
    tmp = f"{path}.{os.getpid()}-{threading.get_ident()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, json.dumps(obj, sort_keys=True).encode())
        if durable:
            os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    if not durable:
        return
    dfd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def write_consensus_meta(path: str, obj: Any) -> None:
    """Persist a replica's consensus metadata atomically and durably, before any reply that depends on it.

    Under bug ``metadata-no-fsync`` (KUDU-2195) it is written but neither the file nor its directory is
    fsynced, so a power loss can take a node back to an epoch it already left, or a fence it forgot.
    """
    write_atomic(path, obj, durable=not bugs.enabled("metadata-no-fsync"))


def read_json(path: str) -> Any:
    """The JSON value in ``path``, or None if the file does not exist."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        return None
