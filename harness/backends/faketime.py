"""Per-node fake wall clocks through libfaketime, for the clock fault.

Each data node starts with libfaketime preloaded and ``FAKETIME_TIMESTAMP_FILE`` pointing at
``CLUSTER/clock/<node>.rc``, a one-line offset such as ``+5.000`` (seconds, relative to the real clock).
``FAKETIME_NO_CACHE=1`` makes the library read that file at every clock call, so rewriting it moves
the node's clock at once: that is how the nemesis bumps, skews and strobes clocks. The file is replaced
atomically (write a temp file, rename), so a node never reads half an offset.

What is faked: the wall clock only (``CLOCK_REALTIME``: ``time.time``, ``datetime.now``), as an NTP
step or a wrong hardware clock would move it. ``FAKETIME_DONT_FAKE_MONOTONIC=1`` leaves
``CLOCK_MONOTONIC`` alone, for two reasons. Real clocks never step the monotonic clock (NTP only slews
it), so a fault there models no real failure. And libfaketime 0.9.10 with a faked monotonic clock hangs
a Python thread's timed wait for ever (``threading.Event().wait(0.2)`` never returns): any timed wait in
a node would hang instead of testing its protocol. asyncio's timers, the RPC timeouts and
the operator's failure detector all run on the monotonic clock, so they are unaffected.

One caveat of that mode, guarded by a test: ``time.sleep`` raises ``OSError(EINVAL)`` under
libfaketime 0.9.10 with ``FAKETIME_DONT_FAKE_MONOTONIC`` (its ``clock_nanosleep`` wrapper mishandles
absolute monotonic deadlines). The node never calls it: it sleeps with asyncio only.

libfaketime keeps a semaphore and a shared memory segment per process in ``/dev/shm``; a process killed
with SIGKILL leaves them behind (harmless to later processes, but litter): :func:`remove_leftovers`
deletes those of given dead processes.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from pathlib import Path

LIB_DIRS = ("/usr/lib/x86_64-linux-gnu/faketime", "/usr/lib/aarch64-linux-gnu/faketime", "/usr/lib/faketime",
            "/usr/local/lib/faketime", "/usr/lib64/faketime")
LIB_NAME = "libfaketimeMT.so.1"  # the thread-safe build: nodes fsync in worker threads
MISSING = "libfaketime is not installed (apt-get install -y libfaketime)"
CLOCK_DIR = "clock"
SHM_DIR = Path("/dev/shm")


class FaketimeUnavailable(RuntimeError):
    """Clock faults were asked for where libfaketime cannot be loaded."""


def library() -> str:
    """The path of libfaketime's thread-safe build.

    Raises:
        FaketimeUnavailable: it is not installed in any of the usual places.
    """
    override = os.environ.get("FENCEPOST_LIBFAKETIME")
    candidates = [override] if override else [os.path.join(d, LIB_NAME) for d in LIB_DIRS]
    for path in candidates:
        if os.path.isfile(path):
            return path
    raise FaketimeUnavailable(MISSING + (f": {override} does not exist" if override else ""))


def why_unavailable() -> str | None:
    """None when libfaketime can be loaded, else why not, in one line."""
    try:
        library()
    except FaketimeUnavailable as e:
        return str(e)
    return None


def clock_file(cluster_dir: str | Path, node: str) -> Path:
    """The offset file node ``node`` of the cluster in ``cluster_dir`` reads its clock from."""
    return Path(cluster_dir) / CLOCK_DIR / f"{node}.rc"


def node_env() -> dict[str, str]:
    """Environment variables for data nodes (``{dir}`` and ``{node}`` are filled in by the launcher).

    Raises:
        FaketimeUnavailable: libfaketime is missing.
    """
    return {
        "LD_PRELOAD": library(),
        "FAKETIME_TIMESTAMP_FILE": str(clock_file("{dir}", "{node}")),
        "FAKETIME_NO_CACHE": "1",
        "FAKETIME_DONT_FAKE_MONOTONIC": "1",
    }


def format_offset(seconds: float) -> str:
    """An offset in libfaketime's relative syntax: a sign, then seconds with a decimal point."""
    return f"{'-' if seconds < 0 else '+'}{abs(seconds):.3f}"


def parse_offset(text: str) -> float:
    """The seconds in an offset written by :func:`format_offset` (also accepts a bare ``+N``).

    Raises:
        ValueError: not a signed number of seconds.
    """
    text = text.strip()
    if not text or text[0] not in "+-":
        raise ValueError(f"a clock offset starts with + or -: {text!r}")
    return float(text)


def write_offset(path: str | Path, seconds: float) -> None:
    """Set the clock read from ``path`` to real time plus ``seconds``, atomically (temp file, rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(format_offset(seconds) + "\n")
    os.replace(tmp, path)


def read_offset(path: str | Path) -> float:
    """The offset in seconds the clock file at ``path`` sets (0 when it does not exist)."""
    try:
        return parse_offset(Path(path).read_text())
    except FileNotFoundError:
        return 0.0


def reset_all(cluster_dir: str | Path, nodes: list[str]) -> None:
    """Put every node's clock back to real time."""
    for node in nodes:
        write_offset(clock_file(cluster_dir, node), 0.0)


def remove_leftovers(pids: Iterable[int], shm_dir: Path = SHM_DIR) -> list[str]:
    """Delete the ``/dev/shm`` files libfaketime made for processes ``pids`` that are no longer alive;
    return their names."""
    removed = []
    for pid in pids:
        if Path(f"/proc/{pid}").exists():
            continue
        for name in (f"faketime_shm_{pid}", f"sem.faketime_sem_{pid}"):
            with contextlib.suppress(FileNotFoundError):
                (shm_dir / name).unlink()
                removed.append(name)
    return removed
