"""Scratch copies of a system's code folders, where mutants are applied; the checkout is never written.

A session (one ``fencepost mutate``) owns ``$TMPDIR/fencepost-mutation/<pid>-<token>/`` and records in
``owner.json`` the processes that use it: itself and each test it starts. Every mutant gets a fresh
copy of the code folders there (no ``__pycache__``: a mutation that keeps a file's size could
otherwise load the bytecode of another), which is removed when its runs end. The session folder is
removed on exit; one left by a killed session is removed by the next session once none of its
processes is alive.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType

PARENT = Path(tempfile.gettempdir()) / "fencepost-mutation"
OWNER = "owner.json"
IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", "*.pyo")


def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (``/proc/PID/stat``), or None where unknown."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2:].split()[19]


def alive(pid: int, started: str | None = None) -> bool:
    """Whether process ``pid`` runs, and is the one that started at ``started`` (when known)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return started is None or _start_time(pid) in (None, started)


def reap(parent: Path = PARENT) -> list[Path]:
    """Remove the session folders under ``parent`` whose processes have all ended; return them."""
    removed: list[Path] = []
    if not parent.is_dir():
        return removed
    for folder in sorted(parent.iterdir()):
        try:
            owners = json.loads((folder / OWNER).read_text())["processes"]
        except (OSError, ValueError, KeyError, TypeError):
            owners = []
            with contextlib.suppress(ValueError):  # no owner file yet: the pid in the name
                owners = [{"pid": int(folder.name.split("-")[0]), "started": None}]
        if not any(alive(int(p["pid"]), p.get("started")) for p in owners):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


class Session:
    """This process's scratch folder (a context manager: removed on exit).

    Args:
        code: the system's code folders by their path relative to the code root.
        parent: where session folders live.
    """

    def __init__(self, code: Mapping[str, Path], parent: Path = PARENT) -> None:
        self.code = {rel: Path(p).resolve() for rel, p in code.items()}
        self.parent = parent
        self.dir = parent / f"{os.getpid()}-{secrets.token_hex(4)}"
        self._processes: list[dict[str, object]] = []
        self._count = 0

    def __enter__(self) -> Session:
        reap(self.parent)
        self.dir.mkdir(parents=True)
        self.track(os.getpid())
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)

    def track(self, pid: int) -> None:
        """Record that process ``pid`` uses the session's copies (so no other session removes them)."""
        self._processes.append({"pid": pid, "started": _start_time(pid)})
        tmp = self.dir / f".{OWNER}.tmp"
        tmp.write_text(json.dumps({"processes": self._processes}) + "\n")
        os.replace(tmp, self.dir / OWNER)

    def copy(self) -> Path:
        """A fresh copy of every code folder; its root, to put first on ``PYTHONPATH``."""
        self._count += 1
        root = self.dir / f"m{self._count}"
        for rel, folder in self.code.items():
            shutil.copytree(folder, root / rel, ignore=IGNORED, symlinks=True)
        return root

    def write(self, root: Path, module: str, text: str) -> Path:
        """Write ``text`` as ``module`` (a path relative to the code root) in the copy at ``root``."""
        path = (root / module).resolve()
        if not path.is_relative_to(root.resolve()) or not path.is_relative_to(self.dir.resolve()):
            raise ValueError(f"{module} is outside the scratch copy")
        path.write_text(text, encoding="utf-8")
        return path

    def discard(self, root: Path) -> None:
        """Remove the copy at ``root``."""
        shutil.rmtree(root, ignore_errors=True)
