"""Each local run's own block of loopback addresses, so that concurrent runs never cut each other.

A run claims a /24 inside 127.0.0.0/8, ``127.X.Y.0`` with X and Y in 1..254 (127.0.0.0/24 is left to
everything else on the machine), and gives each of its processes an address there. Its partitions are
iptables rules between those addresses only, so a second run on the machine, in another block, is
never cut by them, and a pytest session can run campaigns side by side.

A claim is an exclusive ``flock`` on ``<lock dir>/127.X.Y.lock``, held open for as long as the run
lasts: the kernel releases it when the process ends, however it ends, so a SIGKILLed harness never
leaves a block taken for ever. Linux routes all of 127.0.0.0/8 to the loopback interface, so the
addresses need no setup.
"""

from __future__ import annotations

import fcntl
import os
import random
import tempfile
from pathlib import Path

LOCK_DIR = Path(os.environ.get("FENCEPOST_BLOCK_DIR", os.path.join(tempfile.gettempdir(), "fencepost-blocks")))
"""Where claims are kept (``FENCEPOST_BLOCK_DIR`` overrides it)."""

HOSTS_PER_BLOCK = 254


class AddressBlock:
    """One claimed block ``127.X.Y.0/24``: :meth:`host` gives its addresses, :meth:`release` frees it."""

    def __init__(self, x: int, y: int, fd: int) -> None:
        self.x, self.y = x, y
        self._fd: int | None = fd

    @property
    def prefix(self) -> str:
        """``127.X.Y``."""
        return f"127.{self.x}.{self.y}"

    def host(self, i: int) -> str:
        """The ``i``-th address of the block, ``127.X.Y.i`` (1 to 254)."""
        if not 1 <= i <= HOSTS_PER_BLOCK:
            raise ValueError(f"a block has addresses 1 to {HOSTS_PER_BLOCK}, not {i}")
        return f"{self.prefix}.{i}"

    def release(self) -> None:
        """Give the block back. Safe to call twice."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __repr__(self) -> str:
        return f"AddressBlock({self.prefix}.0/24)"


def claim_block(lock_dir: Path = LOCK_DIR, rng: random.Random | None = None) -> AddressBlock:
    """Claim a free block, starting from a random one.

    Raises:
        RuntimeError: every block is taken (65,000 concurrent runs).
    """
    lock_dir.mkdir(parents=True, exist_ok=True)
    candidates = [(x, y) for x in range(1, 255) for y in range(1, 255)]
    start = (rng or random.Random()).randrange(len(candidates))
    for x, y in candidates[start:] + candidates[:start]:
        fd = os.open(lock_dir / f"127.{x}.{y}.lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        return AddressBlock(x, y, fd)
    raise RuntimeError(f"every loopback address block is taken (claims in {lock_dir})")
