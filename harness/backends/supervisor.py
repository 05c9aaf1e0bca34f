"""Child processes of the local backend: start, signal, reap and explain them, one per process spec.

Each process writes its output to its own log file and runs in its own session, so a signal to the
harness (Ctrl-C) does not reach it and teardown decides how it ends: SIGCONT (a paused process must
be able to die), SIGTERM, and SIGKILL after a grace period.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import signal
import socket
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

_PICKED: set[tuple[str, int]] = set()
"""(host, port) pairs this process handed out: two picks never coincide, even before anything binds."""


def _port_free(host: str, port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def _ephemeral_range() -> tuple[int, int]:
    try:
        low, high = (int(x) for x in Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
        return low, high
    except (OSError, ValueError):
        return 32768, 60999


def free_port(host: str) -> int:
    """A port free on ``host``, outside the kernel's ephemeral range (where outgoing connections take their
    local ports, so a pick there could be taken between the pick and the bind).

    Raises:
        RuntimeError: none was found.
    """
    low, high = _ephemeral_range()
    candidates = [p for p in range(20000, 45000) if not low <= p <= high] or list(range(20000, 45000))
    for _ in range(400):
        port = random.choice(candidates)
        if (host, port) not in _PICKED and _port_free(host, port):
            _PICKED.add((host, port))
            return port
    raise RuntimeError(f"no free port found on {host}")


@dataclass
class Child:
    """One supervised process: how to start it and, while it runs, its Popen."""

    name: str
    argv: list[str]
    log: Path
    env: dict[str, str]
    cwd: str
    wrapper: list[str] = field(default_factory=list)
    """Put before ``argv`` at every start (a shell that moves itself into a cgroup, then execs ``argv``)."""
    popen: subprocess.Popen[bytes] | None = None
    started: dict[int, str] = field(default_factory=dict)
    """Every pid it has had, with the command line it was started with (for the reaper)."""

    @property
    def pid(self) -> int | None:
        """The pid while it runs."""
        return self.popen.pid if self.popen is not None and self.popen.poll() is None else None


class Supervisor:
    """Starts and stops named child processes."""

    def __init__(self) -> None:
        self.children: dict[str, Child] = {}

    def add(self, name: str, argv: Sequence[str], log: Path, env: Mapping[str, str], cwd: str,
            wrapper: Sequence[str] = ()) -> None:
        """Register process ``name`` (not started); ``wrapper`` goes before ``argv`` at every start."""
        self.children[name] = Child(name, list(argv), log, dict(env), cwd, list(wrapper))

    def launch(self, name: str, extra_args: Sequence[str] = ()) -> int:
        """Start ``name`` with its arguments (plus ``extra_args`` this time only); return its pid.

        Raises:
            RuntimeError: it already runs.
        """
        child = self.children[name]
        if child.pid is not None:
            raise RuntimeError(f"{name} is already running (pid {child.pid})")
        child.log.parent.mkdir(parents=True, exist_ok=True)
        with child.log.open("ab") as log:
            child.popen = subprocess.Popen([*child.wrapper, *child.argv, *extra_args], stdout=log,
                                           stderr=subprocess.STDOUT,
                                           stdin=subprocess.DEVNULL, cwd=child.cwd, env=child.env,
                                           start_new_session=True)
        child.started[child.popen.pid] = " ".join([*child.argv, *extra_args])
        return child.popen.pid

    def running(self, name: str) -> bool:
        """Whether ``name`` runs (a stopped process runs)."""
        return self.children[name].pid is not None

    def signal(self, name: str, sig: int) -> None:
        """Send ``sig`` to ``name``'s whole process group while it runs, so that a server started through a
        shell wrapper (``sh -c 'server ...'`` without ``exec``) is killed and paused with its shell. Each
        process leads a session of its own (``start_new_session``), so its pid is its group's id.

        Once the process itself has exited, a SIGKILL, SIGTERM or SIGCONT still goes to what is left of its
        group (a server its shell left behind); any other signal is not sent."""
        child = self.children[name]
        if child.popen is None:
            return
        alive = child.popen.poll() is None
        if not alive and sig not in (signal.SIGKILL, signal.SIGTERM, signal.SIGCONT):
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(child.popen.pid, sig)

    def kill(self, name: str, timeout: float = 10.0) -> None:
        """SIGKILL and reap."""
        self.signal(name, signal.SIGKILL)
        self._reap(name, timeout)

    def _reap(self, name: str, timeout: float) -> None:
        popen = self.children[name].popen
        if popen is None:
            return
        try:
            popen.wait(timeout)
        except subprocess.TimeoutExpired:
            self.signal(name, signal.SIGKILL)
            popen.wait(10)

    def wait_exit(self, name: str, timeout: float) -> int | None:
        """Wait for ``name`` to exit on its own; its exit code, or None if it still runs after ``timeout``."""
        popen = self.children[name].popen
        if popen is None:
            return None
        try:
            return popen.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def exited(self) -> dict[str, int]:
        """Processes that were started and have exited since (killed ones included), with their codes."""
        return {name: code for name, c in self.children.items()
                if c.popen is not None and (code := c.popen.poll()) is not None}

    def explain_exits(self, exited: Mapping[str, int]) -> str:
        """One clause per exited process: its name, exit code and the last line of its log."""
        parts = []
        for name, code in sorted(exited.items()):
            log = self.children[name].log
            try:
                lines = [line.strip() for line in log.read_text(errors="replace").splitlines() if line.strip()]
            except OSError:
                lines = []
            why = next((line for line in lines if _SAYS_WHY.search(line)), lines[-1] if lines else None)
            parts.append(f"{name} exited with {code}" + (f" ({why})" if why else "") + f", log {log}")
        return "; ".join(parts)

    def stop_all(self, grace: float = 5.0) -> None:
        """Terminate and reap every process: SIGCONT and SIGTERM, then SIGKILL after ``grace`` seconds."""
        for name in self.children:
            self.signal(name, signal.SIGCONT)
            self.signal(name, signal.SIGTERM)
        deadline = time.monotonic() + grace
        for child in self.children.values():
            if child.popen is None:
                continue
            try:
                child.popen.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                self.signal(child.name, signal.SIGKILL)
                child.popen.wait(10)
            self.signal(child.name, signal.SIGKILL)  # what its shell left of its group, if anything

    def all_pids(self) -> list[int]:
        """Every pid any process has had (for the reaper of a killed harness)."""
        return [pid for c in self.children.values() for pid in c.started]

    def started(self) -> dict[int, str]:
        """Every pid any process has had, with the command line it was started with."""
        return {pid: cmd for c in self.children.values() for pid, cmd in c.started.items()}


_SAYS_WHY = re.compile(r"\b(FATAL|PANIC|CRITICAL|ERROR)\b|^\w*(Error|Exception): |^error: |^fatal: |fencepost-")
"""A log line that says why a process stopped (its first such line names the cause; later ones are fallout)."""


def kill_pids(pids: Mapping[int, str], grace: float = 5.0) -> list[int]:
    """SIGTERM, then SIGKILL, the live processes among ``pids`` whose command line is still the one given
    for them (so a reused pid is never signalled); return those signalled."""
    def alive(pid: int) -> bool:
        return _cmdline(pid).strip() == pids[pid].strip()

    mine = [p for p in pids if alive(p)]
    for pid in mine:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGCONT)
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(alive(p) for p in mine):
        time.sleep(0.1)
    for pid in mine:
        if alive(pid):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    return mine


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def pids_mentioning(text: str) -> dict[int, str]:
    """Processes (not this one) whose command line contains ``text``, with their command lines."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid() and text in (cmd := _cmdline(int(entry))):
            found[int(entry)] = cmd
    return found
