"""A tablet's superblock: which of the Kudu seed's data states it is in, kept on disk.

States: ``DOES_NOT_EXIST`` (no superblock), ``DELETED`` (a tombstone: the data is quarantined, the
consensus metadata ``state.json`` is kept for ever and ``last_entry`` remembers the last entry id),
``COPYING`` (a tablet copy is writing the data) and ``READY`` (normal).

Files under ``DIR/tablets/<t>/``: ``superblock.json`` (``state``, ``last_entry``, ``qdir``, ``session``),
``state.json`` (consensus metadata), ``wal`` and ``snapshot.json`` (data). Quarantined data goes to
``DIR/quarantine/<t>-<n>/``.

:func:`delete` is the seed's deletion (steps 2-6) and :func:`startup` its startup state machine:
DELETED with the WAL still present rolls the deletion forward, COPYING goes back to DELETED, READY
starts normally; anything unreadable raises :class:`DiskLoss` and the node stays offline.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

from system import rules, statefile
from system.rules import COPYING, DELETED, DOES_NOT_EXIST, READY

DATA_FILES = ("wal", "snapshot.json")


class DiskLoss(Exception):
    """Consensus metadata or a superblock is missing or corrupt: the node must not run under its UUID."""


def path(tablet_dir: str) -> str:
    """The superblock file of a tablet directory."""
    return os.path.join(tablet_dir, "superblock.json")


def read(tablet_dir: str) -> dict[str, Any] | None:
    """The superblock, or None (DOES_NOT_EXIST); DiskLoss if it cannot be parsed."""
    try:
        sb = statefile.read_json(path(tablet_dir))
    except ValueError as e:
        raise DiskLoss(f"{path(tablet_dir)}: corrupt superblock: {e}") from e
    if sb is not None and (not isinstance(sb, dict) or sb.get("state") not in (READY, DELETED, COPYING)):
        raise DiskLoss(f"{path(tablet_dir)}: superblock with no valid state: {sb!r}")
    return sb


def write(tablet_dir: str, state: str, last_entry: Any = None, qdir: str | None = None,
          session: int | None = None) -> None:
    """Write and fsync the superblock."""
    os.makedirs(tablet_dir, exist_ok=True)
    statefile.write_atomic(path(tablet_dir), {"state": state, "last_entry": last_entry, "qdir": qdir,
                                              "session": session})


def read_consensus(tablet_dir: str) -> dict[str, Any]:
    """The consensus metadata; DiskLoss if it is missing or corrupt (a superblock says it must exist)."""
    p = os.path.join(tablet_dir, "state.json")
    try:
        cm = statefile.read_json(p)
    except ValueError as e:
        raise DiskLoss(f"{p}: corrupt consensus metadata: {e}") from e
    lost = rules.tablet_files_lost(True, isinstance(cm, dict) and "epoch" in cm, False)
    if lost or not isinstance(cm, dict):
        raise DiskLoss(f"{p}: {lost}")
    return cm


def _new_qdir(data_dir: str, tablet: int) -> str:
    base = os.path.join(data_dir, "quarantine")
    os.makedirs(base, exist_ok=True)
    n = 0
    while os.path.exists(os.path.join(base, f"{tablet}-{n}")):
        n += 1
    return os.path.join(base, f"{tablet}-{n}")


def _fsync_dir(directory: str) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _quarantine_data(tablet_dir: str, qdir: str) -> None:
    """Seed steps 5 and 6: copy the consensus metadata into QDIR, move the data files there."""
    os.makedirs(qdir, exist_ok=True)
    cm = os.path.join(tablet_dir, "state.json")
    if os.path.exists(cm):
        shutil.copy2(cm, os.path.join(qdir, "state.json"))
    for name in DATA_FILES:
        src = os.path.join(tablet_dir, name)
        if os.path.exists(src):
            os.replace(src, os.path.join(qdir, name))
    _fsync_dir(qdir)
    _fsync_dir(tablet_dir)


def delete(data_dir: str, tablet: int, tablet_dir: str, last_entry: Any, epoch: int) -> str:
    """Tombstone a (shut down) tablet; return the quarantine directory.

    Superblock copied to QDIR, then marked DELETED with the last entry id and QDIR (from here the
    delete always rolls forward), then the data moves to QDIR. The consensus metadata stays, with the
    epoch :func:`system.rules.tombstone_keeps_epoch` says."""
    qdir = _new_qdir(data_dir, tablet)
    os.makedirs(qdir, exist_ok=True)
    if os.path.exists(path(tablet_dir)):
        shutil.copy2(path(tablet_dir), os.path.join(qdir, "superblock.json"))
    write(tablet_dir, DELETED, last_entry=last_entry, qdir=qdir)
    _quarantine_data(tablet_dir, qdir)
    kept = rules.tombstone_keeps_epoch(epoch)
    cm_path = os.path.join(tablet_dir, "state.json")
    cm = statefile.read_json(cm_path) or {}
    statefile.write_atomic(cm_path, {**cm, "epoch": kept, "status": "deleted", "leader": None,
                                     "head": last_entry, "commit": -1})
    return qdir


def startup(data_dir: str, tablet: int, tablet_dir: str) -> tuple[str, str | None]:
    """Bring a tablet's files to a consistent state at node start; return (state, what was done).

    Raises DiskLoss when a superblock exists but its consensus metadata does not (or is corrupt)."""
    sb = read(tablet_dir)
    if sb is None:
        try:
            cm = statefile.read_json(os.path.join(tablet_dir, "state.json"))
        except ValueError as e:
            raise DiskLoss(f"{tablet_dir}: corrupt consensus metadata: {e}") from e
        if cm and int(cm.get("epoch", -1)) >= 0:
            raise DiskLoss(f"{tablet_dir}: consensus metadata without a superblock")
        lost = rules.tablet_files_lost(False, cm is not None, any(os.path.exists(os.path.join(tablet_dir, n))
                                                                   for n in DATA_FILES))
        if lost:
            raise DiskLoss(f"{tablet_dir}: {lost}")
        return DOES_NOT_EXIST, None
    read_consensus(tablet_dir)
    if sb["state"] == DELETED:
        if any(os.path.exists(os.path.join(tablet_dir, n)) for n in DATA_FILES):
            _quarantine_data(tablet_dir, sb.get("qdir") or _new_qdir(data_dir, tablet))
            return DELETED, "deletion rolled forward"
        return DELETED, None
    if sb["state"] == COPYING:
        qdir = _new_qdir(data_dir, tablet)
        write(tablet_dir, DELETED, last_entry=sb.get("last_entry"), qdir=qdir)
        _quarantine_data(tablet_dir, qdir)
        return DELETED, "interrupted copy rolled back to DELETED"
    return READY, None
