"""A tablet's write-ahead log: checksummed records, damage detection, suffix truncation.

Each record is ``[u32 length][u32 crc32(payload)][payload]`` with the payload one entry as JSON
``{"e": epoch, "o": offset, "v": value}``. Offsets start at 0 and are contiguous. A batch is written with
one ``write`` call, so a killed process never leaves half a record; a torn or corrupt tail therefore
means real damage (a bad disk, a bad copy), and :func:`Wal.open` reports it instead of trimming it,
because trimming could silently drop an acknowledged entry.
"""

from __future__ import annotations

import json
import os
import struct
import zlib
from typing import Any

from system import bugs

_HEADER = struct.Struct(">II")
MAX_RECORD = 64 * 1024 * 1024

Entry = dict[str, Any]


class WalDamaged(Exception):
    """The log on disk is torn, corrupt or out of order; the tablet must not be served from it."""


def _record(entry: Entry) -> bytes:
    payload = json.dumps(entry, separators=(",", ":")).encode()
    return _HEADER.pack(len(payload), zlib.crc32(payload)) + payload


def scan(data: bytes) -> tuple[list[Entry], list[int]]:
    """Parse a whole log image into entries and their byte positions; raise WalDamaged on any flaw."""
    entries: list[Entry] = []
    positions: list[int] = []
    pos = 0
    while pos < len(data):
        if len(data) - pos < _HEADER.size:
            raise WalDamaged(f"truncated record header at byte {pos}")
        length, crc = _HEADER.unpack_from(data, pos)
        if length > MAX_RECORD or pos + _HEADER.size + length > len(data):
            raise WalDamaged(f"truncated record at byte {pos} (claims {length} bytes)")
        payload = data[pos + _HEADER.size: pos + _HEADER.size + length]
        if zlib.crc32(payload) != crc:
            raise WalDamaged(f"bad checksum in record at byte {pos}")
        try:
            entry = json.loads(payload)
        except ValueError as e:
            raise WalDamaged(f"record at byte {pos} is not an entry: {e}") from e
        if not isinstance(entry, dict) or entry.get("o") != len(entries):
            raise WalDamaged(f"record at byte {pos} has offset {entry.get('o') if isinstance(entry, dict) else '?'},"
                             f" expected {len(entries)}")
        if entries and entry["e"] < entries[-1]["e"]:
            raise WalDamaged(f"record at byte {pos} goes back to epoch {entry['e']}")
        positions.append(pos)
        entries.append(entry)
        pos += _HEADER.size + length
    return entries, positions


class Wal:
    """An open log file; appends are buffered into one write per batch, fsynced by :meth:`sync`."""

    def __init__(self, path: str, fd: int, positions: list[int], size: int) -> None:
        self.path = path
        self._fd = fd
        self._positions = positions
        self._size = size

    @classmethod
    def open(cls, path: str) -> tuple[Wal, list[Entry]]:
        """Open (creating if absent) and verify the log; return it with all its entries, durable.

        The file is fsynced before its entries are returned: a predecessor killed between a write and its
        fsync leaves records that every read sees (they are in the page cache) but that a power loss would
        still take. The replica counts what it opened as durable, and checkpoints its commit index up to it,
        so without this fsync a kill and then a power loss looked like committed entries lost from disk
        (the clean default campaign once showed it: a lossy-link kill of a node, a power loss soon after)."""
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            size = os.fstat(fd).st_size
            data = os.pread(fd, size, 0) if size else b""
            entries, positions = scan(data)
            if not bugs.enabled("ack-before-fsync"):  # that bug's log never fsyncs
                os.fsync(fd)
        except BaseException:
            os.close(fd)
            raise
        return cls(path, fd, positions, size), entries

    def append(self, entries: list[Entry]) -> None:
        """Write entries at the end of the log (not yet durable; call :meth:`sync`)."""
        if not entries:
            return
        chunks = []
        pos = self._size
        for e in entries:
            rec = _record(e)
            self._positions.append(pos)
            pos += len(rec)
            chunks.append(rec)
        buf = b"".join(chunks)
        written = os.pwrite(self._fd, buf, self._size)
        while written < len(buf):
            written += os.pwrite(self._fd, buf[written:], self._size + written)
        self._size = pos

    def sync(self) -> None:
        """Make every appended record durable (skipped under bug ``ack-before-fsync``)."""
        if bugs.enabled("ack-before-fsync"):
            return
        os.fsync(self._fd)

    def truncate_after(self, offset: int) -> None:
        """Drop every record after ``offset`` (-1 drops all) and make the cut durable."""
        keep = offset + 1
        if keep >= len(self._positions):
            return
        cut = self._positions[keep]
        os.ftruncate(self._fd, cut)
        os.fsync(self._fd)
        del self._positions[keep:]
        self._size = cut

    def replace(self, entries: list[Entry]) -> None:
        """Replace the whole log with ``entries`` (installing a snapshot), durably."""
        os.ftruncate(self._fd, 0)
        self._positions = []
        self._size = 0
        self.append(entries)
        os.fsync(self._fd)

    def close(self) -> None:
        """Close the file."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
