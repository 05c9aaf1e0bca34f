"""Which tablet a key belongs to: a stable hash, the same in every process and every run."""

from __future__ import annotations

import zlib


def tablet_for(key: str, tablets: int) -> int:
    """The tablet (0..tablets-1) that owns ``key``: crc32 of its UTF-8 bytes, modulo the tablet count."""
    return zlib.crc32(key.encode()) % tablets
