"""The memory bound on the search (``--max-memory``): sizes, the process's resident memory, the default.

The search looks at the process's resident set size every few thousand steps and stops a partition
that passes the bound; the partition's verdict is then ``unknown``, with the reason, its memo is
freed, and the check goes on with the next partition. The bound is on the whole process (what the
machine sees), not on an estimate of the memo's size, so it also covers what the history itself holds.
"""

from __future__ import annotations

import os
import re
import resource

DEFAULT_SHARE = 0.5
"""Share of the machine's physical memory the search may use by default, over all checking processes."""

_UNITS = {"": 1, "B": 1, "K": 1 << 10, "KB": 1 << 10, "KIB": 1 << 10, "M": 1 << 20, "MB": 1 << 20,
          "MIB": 1 << 20, "G": 1 << 30, "GB": 1 << 30, "GIB": 1 << 30, "T": 1 << 40, "TB": 1 << 40,
          "TIB": 1 << 40}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*$")
_MIN = 16 << 20
"""Smaller bounds are refused: the interpreter alone holds more."""

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def parse_size(text: str) -> int:
    """Bytes in a size such as ``1G``, ``512M``, ``1.5GiB`` or ``2000000000`` (units are powers of 1024).

    Raises:
        ValueError: the text is not a size, or is below 16 MiB; the message says why in one line.
    """
    m = _SIZE.match(text)
    if m is None or m.group(2).upper() not in _UNITS:
        raise ValueError(f"{text!r} is not a size (examples: 1G, 512M, 1.5GiB, 2000000000)")
    size = int(float(m.group(1)) * _UNITS[m.group(2).upper()])
    if size < _MIN:
        raise ValueError(f"{text!r} is too small: the checker needs at least 16M")
    return size


def format_size(size: float) -> str:
    """A size in the largest binary unit that keeps it at 1 or more, such as ``1.0 GiB``."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{int(size)} B"


def machine_memory() -> int:
    """The machine's physical memory in bytes (0 when the system will not say)."""
    try:
        return int(os.sysconf("SC_PHYS_PAGES")) * _PAGE
    except (ValueError, OSError, AttributeError):
        return 0


def default_max_memory() -> int:
    """The default bound: :data:`DEFAULT_SHARE` of the machine's memory (4 GiB when unknown)."""
    total = machine_memory()
    return int(total * DEFAULT_SHARE) if total else 4 << 30


def rss_bytes() -> int:
    """The process's resident set size now (its peak, where ``/proc`` is missing)."""
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def share(total: int | None, processes: int) -> int | None:
    """Each of ``processes`` checking processes' part of a ``total`` bound (None: no bound)."""
    if total is None:
        return None
    return max(_MIN, total // max(1, processes))


def give_back() -> None:
    """Return freed heap memory to the system where the C library can (glibc's ``malloc_trim``),
    so that one partition's freed memo does not count against the next."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
