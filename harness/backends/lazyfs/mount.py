"""The local backend's side of lazy storage: mount the lazy filesystem over a data directory, talk to it, unmount.

When a test needs the power-loss capability, the local backend mounts :mod:`harness.backends.lazyfs`
(a separate process) over each node's data directory, with its backing directory beside it, before the
node starts; the node never knows. :meth:`LazyMount.drop` is a power loss of that node's disk.
Unmounting writes everything back (a clean shutdown); a busy mount is detached lazily.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from typing import Any

MODULE = "harness.backends.lazyfs"

DEFAULT_WRITEBACK_S = 5.0
"""Seconds after which an unsynced change reaches the disk anyway (ext4 commits its journal every 5 s)."""



def control_name(mount: str) -> str:
    """The abstract socket name of the filesystem mounted at ``mount``."""
    return "fencepost-lazyfs-" + hashlib.sha1(os.path.abspath(mount).encode()).hexdigest()[:16]


def request(name: str, cmd: str, timeout: float = 10.0, **args: Any) -> dict[str, Any]:
    """One control request (``drop``, ``sync``, ``stats``, ``ping``) to the filesystem on socket ``name``.

    Raises:
        OSError: nothing listens there.
        RuntimeError: the filesystem answered with an error.
    """
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect("\0" + name)
        s.sendall(json.dumps({"cmd": cmd, **args}).encode() + b"\n")
        buf = b""
        while not buf.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
    reply = json.loads(buf or b"{}")
    if not isinstance(reply, dict) or "error" in reply:
        raise RuntimeError(f"lazyfs {name}: {reply.get('error') if isinstance(reply, dict) else reply!r}")
    return reply


def fuse_mounts_under(directory: str) -> list[str]:
    """Mount points of FUSE filesystems at or below ``directory`` (deepest first)."""
    root = os.path.abspath(directory)
    found = []
    with contextlib.suppress(OSError), open("/proc/self/mounts") as fh:
        for line in fh:
            parts = line.split()
            if len(parts) >= 3 and parts[2].startswith("fuse"):
                point = parts[1].replace("\\040", " ")
                if point == root or point.startswith(root + os.sep):
                    found.append(point)
    return sorted(found, key=len, reverse=True)


def unmount(mount: str, timeout: float = 10.0) -> None:
    """Unmount ``mount`` (fusermount3 -u; lazily with -uz if it is busy); quiet if it is not mounted."""
    if os.path.abspath(mount) not in fuse_mounts_under(mount):
        return
    tool = "fusermount3" if subprocess.run(["which", "fusermount3"], capture_output=True).returncode == 0 \
        else "fusermount"
    for flags in ("-u", "-uz"):
        if subprocess.run([tool, flags, mount], capture_output=True, timeout=timeout).returncode == 0:
            return
    subprocess.run(["umount", "-l", mount], capture_output=True, timeout=timeout)


class LazyMount:
    """One node's lazy filesystem: the process, its backing directory, its mount point, its control socket."""

    def __init__(self, backing: str, mount: str, log: str, writeback_s: float = DEFAULT_WRITEBACK_S,
                 passthrough: tuple[str, ...] = (), cached: bool = False) -> None:
        self.backing, self.mount, self.log = os.path.abspath(backing), os.path.abspath(mount), log
        self.writeback_s, self.passthrough, self.cached = writeback_s, passthrough, cached
        self.control = control_name(self.mount)
        self.popen: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        """The filesystem process's PID while it runs."""
        return self.popen.pid if self.popen is not None and self.popen.poll() is None else None

    def start(self, env: dict[str, str], cwd: str, detach: bool, timeout: float = 20.0) -> None:
        """Start the filesystem process and wait until the mount answers (``passthrough``: file names that are
        the test's observations, not the process's state, written straight through)."""
        if self.pid is not None:
            return
        os.makedirs(self.backing, exist_ok=True)
        os.makedirs(self.mount, exist_ok=True)
        argv = [sys.executable, "-m", MODULE, "--backing", self.backing, "--mount", self.mount,
                "--control", self.control, "--writeback", str(self.writeback_s)]
        argv += [a for g in self.passthrough for a in ("--passthrough", g)]
        if self.cached:
            argv.append("--cached")
        with open(self.log, "ab") as log:
            self.popen = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd=cwd, env=env,
                                          start_new_session=detach)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.popen.poll() is not None:
                raise RuntimeError(f"lazy filesystem for {self.mount} exited with {self.popen.returncode}; "
                                   f"log {self.log}")
            with contextlib.suppress(OSError, RuntimeError):
                if self.mount in fuse_mounts_under(self.mount) and request(self.control, "ping", timeout=2.0):
                    return
            time.sleep(0.05)
        self.stop()
        raise TimeoutError(f"lazy filesystem for {self.mount} not mounted within {timeout}s; log {self.log}")

    def drop(self, tear: bool = False, seed: int | None = None) -> dict[str, Any]:
        """Power loss: forget every unsynced change (tearing the last write if asked); what was lost."""
        return request(self.control, "drop", tear=tear, seed=seed)

    def stats(self) -> dict[str, Any]:
        """The filesystem's counters and what is pending."""
        return request(self.control, "stats")

    def stop(self, timeout: float = 10.0) -> None:
        """Unmount (everything pending is written back) and reap the process."""
        unmount(self.mount, timeout)
        if self.popen is None:
            return
        try:
            self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait(10)


def release_storage(directory: str, mounts: dict[str, Any], timeout: float = 10.0) -> list[int]:
    """Unmount every FUSE mount under a cluster ``directory`` and end the filesystem processes that
    ``mounts`` (``cluster.json``'s ``mounts``) names; their PIDs (for ``fencepost cluster down``)."""
    for point in fuse_mounts_under(directory):
        unmount(point, timeout)
    pids = [int(m["pid"]) for m in mounts.values() if isinstance(m.get("pid"), int) and _is_lazyfs(m["pid"])]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(_is_lazyfs(p) for p in pids):
        time.sleep(0.05)
    for pid in pids:
        if _is_lazyfs(pid):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    return pids


def _is_lazyfs(pid: int) -> bool:
    """Is ``pid`` a live lazy filesystem process (not a reused PID, not a zombie)?"""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return MODULE.encode() in f.read()
    except OSError:
        return False
