"""Damage a tablet's files on disk, as a bad disk or a bad copy would.

Three kinds: ``truncate`` cuts the last record of the WAL in half (a torn tail), ``bitflip`` flips one
byte inside a WAL record's payload (a checksum mismatch), and ``delete-metadata`` deletes the tablet's
consensus metadata (``state.json``: its epoch, status and commit index) and leaves the WAL. The node
must detect each at its next start and never serve wrong data: a damaged WAL makes it refuse to serve
that tablet (the control plane tombstones and re-copies it); lost consensus metadata is disk loss, so
the node refuses to start under its UUID at all and must be reformatted (a new identity).
"""

from __future__ import annotations

import os
import random
import struct
from pathlib import Path

HEADER = struct.Struct(">II")  # length, crc32: the record header of system/wal.py
WAL_KINDS = ("truncate", "bitflip")
METADATA = "state.json"  # a tablet's consensus metadata, see system/replica.py
KINDS = (*WAL_KINDS, "delete-metadata")


def record_spans(data: bytes) -> list[tuple[int, int]]:
    """(start, end) of each whole record in a WAL image."""
    spans = []
    pos = 0
    while pos + HEADER.size <= len(data):
        length, _ = HEADER.unpack_from(data, pos)
        end = pos + HEADER.size + length
        if end > len(data):
            break
        spans.append((pos, end))
        pos = end
    return spans


def damage_bytes(data: bytes, kind: str, rng: random.Random) -> tuple[bytes, dict[str, int | str]]:
    """A damaged copy of a WAL image, and what was done (offsets in bytes).

    Raises:
        ValueError: an unknown kind, or an image with no whole record to damage.
    """
    spans = record_spans(data)
    if not spans:
        raise ValueError("the WAL holds no whole record to damage")
    if kind == "truncate":
        start, end = spans[-1]
        cut = start + HEADER.size + max(1, (end - start - HEADER.size) // 2)
        return data[:cut], {"kind": kind, "size": len(data), "cut_at": cut}
    if kind == "bitflip":
        start, end = rng.choice(spans)
        at = rng.randrange(start + HEADER.size, end)
        flipped = bytearray(data)
        flipped[at] ^= 0x20
        return bytes(flipped), {"kind": kind, "byte": at}
    raise ValueError(f"unknown damage {kind!r}; expected one of {', '.join(WAL_KINDS)}")


def damage_wal(path: Path, kind: str, rng: random.Random) -> dict[str, int | str]:
    """Damage the WAL file at ``path`` in place (and fsync it); return what was done."""
    damaged, done = damage_bytes(path.read_bytes(), kind, rng)
    with open(path, "wb") as fh:
        fh.write(damaged)
        fh.flush()
        os.fsync(fh.fileno())
    return {**done, "file": str(path)}


def pick_wal(data_dir: Path, rng: random.Random) -> Path | None:
    """A random non-empty tablet WAL under a node's data directory, or None."""
    wals = sorted(p for p in (data_dir / "tablets").glob("*/wal") if p.stat().st_size > HEADER.size)
    return rng.choice(wals) if wals else None


def delete_metadata(tablet_dir: Path) -> dict[str, int | str]:
    """Delete a tablet's consensus metadata file (and fsync its folder); return what was done."""
    path = tablet_dir / METADATA
    path.unlink()
    fd = os.open(tablet_dir, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    return {"kind": "delete-metadata", "file": str(path)}


def damage_tablet(data_dir: Path, kind: str, rng: random.Random) -> dict[str, int | str | None]:
    """Apply damage ``kind`` to a random tablet with a non-empty WAL under a node's data directory; the
    damaged file is named relative to the data directory (``tablets/<t>/wal``), wherever it was edited.

    Raises:
        ValueError: an unknown kind.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown damage {kind!r}; expected one of {', '.join(KINDS)}")
    wal = pick_wal(data_dir, rng)
    if wal is None:
        return {"kind": kind, "file": None}
    done = delete_metadata(wal.parent) if kind == "delete-metadata" else damage_wal(wal, kind, rng)
    return {**done, "file": Path(str(done["file"])).relative_to(data_dir).as_posix()}
