"""``python -m harness.backends.lazyfs --backing DIR --mount DIR --control NAME``: mount and serve until unmounted.

Options: ``--writeback S`` (seconds; 0 never writes back on its own), ``--passthrough GLOB``
(repeatable), ``--debug`` (libfuse's request trace). SIGTERM or ``fusermount3 -u`` unmounts cleanly,
writing every pending change back. Run as root, the mount admits every user (``allow_other``), with the
kernel checking permissions.
"""

from __future__ import annotations

import argparse
import os
import threading
import warnings

from harness.backends.lazyfs.cache import Volatile
from harness.backends.lazyfs.control import serve
from harness.backends.lazyfs.fs import LazyOperations


def _writeback_loop(vol: Volatile, seconds: float, stop: threading.Event) -> None:
    while not stop.wait(min(0.5, seconds / 4)):
        with vol.lock:
            vol.writeback(seconds)


def main(argv: list[str] | None = None) -> None:
    """Parse the arguments, mount, serve the control channel, run the FUSE loop until unmounted."""
    p = argparse.ArgumentParser(prog="python -m harness.backends.lazyfs")
    p.add_argument("--backing", required=True)
    p.add_argument("--mount", required=True)
    p.add_argument("--control", required=True, help="abstract Unix socket name of the control channel")
    p.add_argument("--writeback", type=float, default=0.0)
    p.add_argument("--passthrough", action="append", default=[])
    p.add_argument("--debug", action="store_true")
    p.add_argument("--cached", action="store_true",
                   help="let the kernel cache file pages (needed by processes that mmap their files; the mount "
                        "must then be remounted after a drop, so no page outlives it)")
    a = p.parse_args(argv)
    import mfusepy

    os.makedirs(a.backing, exist_ok=True)
    os.makedirs(a.mount, exist_ok=True)
    vol = Volatile(a.backing)
    server = serve(vol, a.control)
    stop = threading.Event()
    if a.writeback > 0:
        threading.Thread(target=_writeback_loop, args=(vol, a.writeback, stop), daemon=True).start()
    warnings.simplefilter("ignore", DeprecationWarning)
    os.umask(0)  # modes arrive with the caller's umask already applied (harness.backends.lazyfs.fs)
    try:
        mfusepy.FUSE(LazyOperations(vol, tuple(a.passthrough)), a.mount, foreground=True, debug=a.debug,
                     fsname="lazyfs", subtype="lazyfs", default_permissions=True,
                     allow_other=os.geteuid() == 0,  # a non-root mounter would need user_allow_other
                     direct_io=not a.cached, attr_timeout=0, entry_timeout=0, negative_timeout=0)
    finally:
        stop.set()
        server.shutdown()


if __name__ == "__main__":
    main()
