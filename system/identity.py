"""A node's identity on disk and disk-loss detection (Kudu seed, "Failure of a disk with consensus
metadata").

``DIR/instance.json`` holds ``uuid``, ``id`` (the process name), ``member`` (the member id the master
gave it), ``cluster_id`` and ``joined``. ``DIR/tablets/FORMAT`` holds the UUID too: it is written when the
data directory is formatted, so losing the tablets (consensus metadata) while the instance file
survives is detected.

:func:`load` refuses (raises :class:`~system.superblock.DiskLoss`) when the instance file is missing or
corrupt while data is present, when the tablets directory or its FORMAT marker is gone, or when a
tablet's superblock or consensus metadata is unreadable. The node then stays offline and says why;
started with ``--reformat`` it moves the old files aside and takes a new UUID (a new node to the master).
An empty directory is simply a new node.
"""

from __future__ import annotations

import os
import time
import uuid as uuidlib
from dataclasses import asdict, dataclass

from system import statefile, superblock
from system.superblock import DiskLoss


@dataclass
class Identity:
    """What ``instance.json`` holds."""

    uuid: str
    id: str
    member: str | None = None
    cluster_id: str | None = None
    joined: bool = False


def instance_path(data_dir: str) -> str:
    """The instance file."""
    return os.path.join(data_dir, "instance.json")


def save(data_dir: str, ident: Identity) -> None:
    """Write the instance file durably."""
    statefile.write_atomic(instance_path(data_dir), asdict(ident))


def _format(data_dir: str, node_id: str) -> Identity:
    ident = Identity(uuid=str(uuidlib.uuid4()), id=node_id)
    os.makedirs(os.path.join(data_dir, "tablets"), exist_ok=True)
    statefile.write_atomic(os.path.join(data_dir, "tablets", "FORMAT"), {"uuid": ident.uuid})
    save(data_dir, ident)
    return ident


def _has_data(data_dir: str) -> bool:
    tablets = os.path.join(data_dir, "tablets")
    return os.path.isdir(tablets) and any(n != "FORMAT" for n in os.listdir(tablets))


def check(data_dir: str, node_id: str) -> Identity:
    """The identity, after verifying the data directory; a fresh one for an empty directory."""
    try:
        inst = statefile.read_json(instance_path(data_dir))
    except ValueError as e:
        raise DiskLoss(f"instance file is corrupt: {e}") from e
    if inst is None:
        if _has_data(data_dir):
            raise DiskLoss("instance file is missing but tablet data is present")
        return _format(data_dir, node_id)
    if not isinstance(inst, dict) or not inst.get("uuid"):
        raise DiskLoss(f"instance file is invalid: {inst!r}")
    ident = Identity(uuid=str(inst["uuid"]), id=str(inst.get("id") or node_id), member=inst.get("member"),
                     cluster_id=inst.get("cluster_id"), joined=bool(inst.get("joined")))
    try:
        marker = statefile.read_json(os.path.join(data_dir, "tablets", "FORMAT"))
    except ValueError as e:
        raise DiskLoss(f"tablets/FORMAT is corrupt: {e}") from e
    if not marker or marker.get("uuid") != ident.uuid:
        raise DiskLoss(f"consensus metadata is missing (tablets/FORMAT {'absent' if not marker else 'foreign'})"
                       f" for node {ident.uuid}")
    tablets = os.path.join(data_dir, "tablets")
    for name in sorted(os.listdir(tablets)):
        if name.isdigit():
            superblock.read(os.path.join(tablets, name))
            if os.path.exists(superblock.path(os.path.join(tablets, name))):
                superblock.read_consensus(os.path.join(tablets, name))
    return ident


def reformat(data_dir: str, node_id: str) -> Identity:
    """Move every old file aside (``DIR/reformatted-<ts>/``) and take a new UUID."""
    aside = os.path.join(data_dir, f"reformatted-{int(time.time() * 1000)}")
    os.makedirs(aside, exist_ok=True)
    for name in os.listdir(data_dir):
        if not name.startswith("reformatted-") and name != "events.jsonl":
            os.replace(os.path.join(data_dir, name), os.path.join(aside, name))
    return _format(data_dir, node_id)
