"""The volatile part of the lazy filesystem: cached file data and the journal of name changes.

:class:`Volatile` holds everything that is not yet on the backing directory ("the disk"), keyed by the
backing file's inode (stable across renames). Every method is called with :attr:`Volatile.lock` held
by the caller (the FUSE operations and the control server share it).
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any

STASH = ".lazyfs-stash"
"""Hidden folder in the backing root where replaced or removed entries wait until their removal is durable."""


@dataclass
class DataOp:
    """One cached change to a file: a write (``data`` at ``offset``) or a truncate (to ``size``)."""

    seq: int
    at: float
    offset: int = 0
    data: bytes | None = None
    size: int = 0


@dataclass
class Dirty:
    """A file with cached changes: a backing descriptor to write them through, its live size, the changes."""

    fd: int
    size: int
    path: str
    ops: list[DataOp] = field(default_factory=list)


@dataclass
class NameOp:
    """One journalled name change: ``kind`` with its paths (backing-relative), the folders it changes,
    the stash entry holding what it replaced or removed (if any), and the inode it names (if any)."""

    seq: int
    at: float
    kind: str
    paths: tuple[str, ...]
    dirs: frozenset[str]
    stash: str | None = None
    ino: int | None = None


def parent(rel: str) -> str:
    """The folder of a mount-relative path ("/" for the root)."""
    return os.path.dirname(rel.rstrip("/")) or "/"


class Volatile:
    """Cached data and journalled names over ``backing``; see :mod:`harness.backends.lazyfs`."""

    def __init__(self, backing: str) -> None:
        self.backing = os.path.abspath(backing)
        self.stash_dir = os.path.join(self.backing, STASH)
        os.makedirs(self.stash_dir, exist_ok=True)
        self.lock = threading.RLock()
        self.dirty: dict[int, Dirty] = {}
        self.journal: list[NameOp] = []
        self._seq = 0
        self.stats: dict[str, int] = {k: 0 for k in (
            "writes", "bytes_written", "fsyncs", "dir_fsyncs", "flushed_writes", "drops", "dropped_writes",
            "dropped_bytes", "undone_names", "committed_names", "torn")}

    def real(self, rel: str) -> str:
        """The backing path of a mount-relative path."""
        return os.path.join(self.backing, rel.lstrip("/"))

    def _next(self) -> int:
        self._seq += 1
        return self._seq

    # --- data -------------------------------------------------------------------------------------------

    def _dirty_for(self, fd: int, rel: str) -> Dirty:
        ino = os.fstat(fd).st_ino
        d = self.dirty.get(ino)
        if d is None:
            own = os.open(f"/proc/self/fd/{fd}", os.O_RDWR)
            d = self.dirty[ino] = Dirty(own, os.fstat(own).st_size, rel)
        d.path = rel
        return d

    def size_of(self, ino: int, backing_size: int) -> int:
        """The live size of inode ``ino`` (its backing size unless it has cached changes)."""
        d = self.dirty.get(ino)
        return d.size if d is not None else backing_size

    def write(self, fd: int, rel: str, data: bytes, offset: int) -> int:
        """Cache a write to the file open as backing descriptor ``fd``."""
        d = self._dirty_for(fd, rel)
        d.ops.append(DataOp(self._next(), time.monotonic(), offset, bytes(data)))
        d.size = max(d.size, offset + len(data))
        self.stats["writes"] += 1
        self.stats["bytes_written"] += len(data)
        return len(data)

    def truncate(self, fd: int, rel: str, size: int) -> None:
        """Cache a size change."""
        d = self._dirty_for(fd, rel)
        d.ops.append(DataOp(self._next(), time.monotonic(), size=size))
        d.size = size

    def read(self, fd: int, size: int, offset: int) -> bytes:
        """The live bytes: the backing file with the cached changes laid over it, in order."""
        ino = os.fstat(fd).st_ino
        d = self.dirty.get(ino)
        if d is None:
            return os.pread(fd, size, offset)
        end = min(offset + size, d.size)
        if end <= offset:
            return b""
        buf = bytearray(os.pread(fd, end - offset, offset).ljust(end - offset, b"\0"))
        for op in d.ops:
            if op.data is None:  # a truncate: everything past it reads as zeros from then on
                if op.size < end:
                    start = max(op.size, offset) - offset
                    buf[start:] = bytes(len(buf) - start)
                continue
            lo, hi = max(op.offset, offset), min(op.offset + len(op.data), end)
            if lo < hi:
                buf[lo - offset: hi - offset] = op.data[lo - op.offset: hi - op.offset]
        return bytes(buf)

    @staticmethod
    def _apply(fd: int, ops: list[DataOp]) -> None:
        for op in ops:
            if op.data is None:
                os.ftruncate(fd, op.size)
            else:
                os.pwrite(fd, op.data, op.offset)

    def take_for_sync(self, fd: int) -> int | None:
        """Write every cached change of this file to its backing file; the descriptor to fsync (or None).

        The caller fsyncs outside the lock: from the moment the bytes are in the backing file they are
        durable as far as this filesystem is concerned.
        """
        self.stats["fsyncs"] += 1
        d = self.dirty.pop(os.fstat(fd).st_ino, None)
        if d is None:
            return None
        self._apply(d.fd, d.ops)
        self.stats["flushed_writes"] += len(d.ops)
        return d.fd

    def forget_inode(self, ino: int) -> None:
        """Drop the cached changes of a file that no longer exists anywhere."""
        d = self.dirty.pop(ino, None)
        if d is not None:
            os.close(d.fd)

    # --- names ------------------------------------------------------------------------------------------

    def stash(self, rel: str) -> str:
        """Move the backing entry at ``rel`` into the stash; its stash name."""
        name = f"{self._next()}-{os.path.basename(rel.rstrip('/'))}"
        os.rename(self.real(rel), os.path.join(self.stash_dir, name))
        return name

    def record(self, kind: str, paths: tuple[str, ...], stash: str | None = None) -> None:
        """Journal a name change that has just been applied to the backing directory."""
        dirs = frozenset(parent(p) for p in paths)
        ino = None
        if kind in ("create", "rename"):
            with contextlib.suppress(OSError):
                ino = os.lstat(self.real(paths[-1])).st_ino
        self.journal.append(NameOp(self._next(), time.monotonic(), kind, paths, dirs, stash, ino))

    def commit_dir(self, rel: str) -> None:
        """fsync of a folder: the journal up to its last change there becomes durable."""
        self.stats["dir_fsyncs"] += 1
        rel = rel.rstrip("/") or "/"
        last = max((i for i, op in enumerate(self.journal) if rel in op.dirs), default=-1)
        self._commit_names(last + 1)

    def _commit_names(self, count: int) -> None:
        """Make the first ``count`` journal entries durable. As in ext4's data=ordered mode, the data of a
        file a committed entry names is written back first, so a durable name never shows an empty file."""
        done, self.journal = self.journal[:count], self.journal[count:]
        for op in done:
            d = self.dirty.pop(op.ino, None) if op.ino is not None else None
            if d is not None:
                self._apply(d.fd, d.ops)
                self.stats["flushed_writes"] += len(d.ops)
                os.close(d.fd)
            if op.stash is not None:
                self._remove_stash(op.stash)
        self.stats["committed_names"] += len(done)

    def _remove_stash(self, name: str) -> None:
        path = os.path.join(self.stash_dir, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
            return
        with contextlib.suppress(OSError):
            ino = os.lstat(path).st_ino
            os.unlink(path)
            d = self.dirty.get(ino)
            if d is not None and os.fstat(d.fd).st_nlink == 0:
                self.forget_inode(ino)

    def _undo(self, op: NameOp) -> None:
        kind, paths = op.kind, op.paths
        if kind in ("create", "symlink"):
            os.unlink(self.real(paths[0]))
        elif kind == "mkdir":
            os.rmdir(self.real(paths[0]))
        elif kind in ("unlink", "rmdir"):
            assert op.stash is not None
            os.rename(os.path.join(self.stash_dir, op.stash), self.real(paths[0]))
        elif kind == "rename":
            os.rename(self.real(paths[1]), self.real(paths[0]))
            if op.stash is not None:
                os.rename(os.path.join(self.stash_dir, op.stash), self.real(paths[1]))

    # --- durability events ------------------------------------------------------------------------------

    def writeback(self, older_than_s: float) -> None:
        """Write back every change made more than ``older_than_s`` seconds ago, in order."""
        limit = time.monotonic() - older_than_s
        for ino, d in list(self.dirty.items()):
            old = [op for op in d.ops if op.at <= limit]
            if old:
                self._apply(d.fd, old)
                self.stats["flushed_writes"] += len(old)
                d.ops = d.ops[len(old):]
            if not d.ops:
                self.dirty.pop(ino)
                os.close(d.fd)
        self._commit_names(sum(1 for op in self.journal if op.at <= limit))

    def sync_all(self) -> None:
        """Make everything durable (a clean shutdown, or ``sync``)."""
        for d in self.dirty.values():
            self._apply(d.fd, d.ops)
            self.stats["flushed_writes"] += len(d.ops)
            os.fsync(d.fd)
            os.close(d.fd)
        self.dirty.clear()
        self._commit_names(len(self.journal))

    def drop(self, tear: bool = False, seed: int | None = None) -> dict[str, Any]:
        """Power loss: forget every cached change and undo the journal, newest first; say what was lost.

        With ``tear``, the file that got the last write keeps its changes up to a random byte inside it.
        """
        out: dict[str, Any] = {"dropped_writes": 0, "dropped_bytes": 0, "undone_names": [], "torn": None}
        if tear:
            out["torn"] = self._tear(random.Random(seed))
        for d in self.dirty.values():
            out["dropped_writes"] += sum(1 for op in d.ops if op.data is not None)
            out["dropped_bytes"] += sum(len(op.data) for op in d.ops if op.data is not None)
            os.close(d.fd)
        self.dirty.clear()
        for op in reversed(self.journal):
            try:
                self._undo(op)
                out["undone_names"].append(f"{op.kind} {' -> '.join(op.paths)}")
            except OSError as e:
                out["undone_names"].append(f"{op.kind} {' -> '.join(op.paths)} (not undone: {e.strerror})")
                print(f"lazyfs: drop could not undo {op.kind} {' -> '.join(op.paths)}: {e}", file=sys.stderr,
                      flush=True)
        self.journal = []
        self.stats["drops"] += 1
        self.stats["dropped_writes"] += out["dropped_writes"]
        self.stats["dropped_bytes"] += out["dropped_bytes"]
        self.stats["undone_names"] += len(out["undone_names"])
        return out

    def _tear(self, rng: random.Random) -> dict[str, Any] | None:
        writes = [(op.seq, ino) for ino, d in self.dirty.items() for op in d.ops if op.data is not None]
        if not writes:
            return None
        _, ino = max(writes)
        d = self.dirty[ino]
        last = max((i for i, op in enumerate(d.ops) if op.data is not None), key=lambda i: d.ops[i].seq)
        op = d.ops[last]
        assert op.data is not None
        keep = rng.randint(1, len(op.data) - 1) if len(op.data) > 1 else 0
        self._apply(d.fd, d.ops[:last])
        if keep:
            os.pwrite(d.fd, op.data[:keep], op.offset)
        self.stats["torn"] += 1
        d.ops = d.ops[last + 1:]
        return {"file": d.path, "offset": op.offset, "kept": keep, "of": len(op.data)}

    def pending(self) -> dict[str, int]:
        """How much is not yet durable."""
        return {"pending_writes": sum(len(d.ops) for d in self.dirty.values()),
                "pending_bytes": sum(len(op.data or b"") for d in self.dirty.values() for op in d.ops),
                "pending_names": len(self.journal)}
