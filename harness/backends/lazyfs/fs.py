"""The FUSE operations of the lazy filesystem: a loopback over the backing directory through :class:`Volatile`.

File handles are backing descriptors (always opened read-write, so cached data can be written
back through them). Files matching a passthrough glob bypass the cache and the journal.

The process usually runs as root while the server on the mount runs as another user (PostgreSQL as
``postgres``). As on a real disk, what a caller creates is the caller's: its uid, and its gid unless the
folder is set-group-ID (then the folder's, which the backing filesystem has already given it). Modes arrive
with the caller's umask applied by the kernel; the process's own umask is cleared by ``__main__``.
Permission checks are the kernel's (``default_permissions``).
"""

from __future__ import annotations

import contextlib
import errno
import fnmatch
import os
import stat
from typing import Any

import mfusepy

from harness.backends.lazyfs.cache import STASH, Volatile

_STAT_KEYS = ("st_mode", "st_ino", "st_nlink", "st_uid", "st_gid", "st_size", "st_blocks", "st_blksize")


class LazyOperations(mfusepy.Operations):
    """Loopback operations whose unsynced changes live in a :class:`Volatile`."""

    use_ns = True

    def __init__(self, volatile: Volatile, passthrough: tuple[str, ...] = ()) -> None:
        self.vol = volatile
        self.passthrough = passthrough
        self.ids = (os.geteuid(), os.getegid())

    def _own(self, real: str, mode: int, fd: int | None = None) -> None:
        """Give the new backing entry ``real`` to the calling process (nothing to do when it is our own)."""
        uid, gid, _ = mfusepy.fuse_get_context()
        if (uid, gid) == self.ids:
            return
        if os.stat(os.path.dirname(real)).st_mode & stat.S_ISGID:
            gid = -1  # a set-group-ID folder gives its own group, as the backing filesystem already did
        if fd is None:
            os.chown(real, uid, gid, follow_symlinks=False)
            return
        os.fchown(fd, uid, gid)
        if mode & (stat.S_ISUID | stat.S_ISGID):  # chown clears them on a file; the kernel has vetted the mode
            os.fchmod(fd, stat.S_IMODE(mode))

    def _created(self, real: str, mode: int, fd: int | None = None) -> None:
        """Own a just-created entry; if that fails, remove it again (it was never journalled) and fail."""
        try:
            self._own(real, mode, fd)
        except OSError:
            if fd is not None:
                os.close(fd)
            with contextlib.suppress(OSError):
                if os.path.isdir(real) and not os.path.islink(real):
                    os.rmdir(real)
                else:
                    os.unlink(real)
            raise

    def _pass(self, path: str) -> bool:
        name = os.path.basename(path)
        return any(fnmatch.fnmatch(name, g) for g in self.passthrough)

    @staticmethod
    def _hidden(path: str) -> bool:
        return path.strip("/").split("/", 1)[0] == STASH

    def _real(self, path: str) -> str:
        if self._hidden(path):
            raise OSError(errno.ENOENT, "no such file")
        return self.vol.real(path)

    # --- attributes and listing -------------------------------------------------------------------------

    def getattr(self, path: str, fh: int | None = None) -> dict[str, Any]:
        """lstat of the backing entry, with the live size of a file that has cached changes."""
        st = os.fstat(fh) if fh is not None else os.lstat(self._real(path))
        attrs: dict[str, Any] = {k: getattr(st, k) for k in _STAT_KEYS}
        attrs.update(st_atime=st.st_atime_ns, st_mtime=st.st_mtime_ns, st_ctime=st.st_ctime_ns)
        if stat.S_ISREG(st.st_mode):
            with self.vol.lock:
                attrs["st_size"] = self.vol.size_of(st.st_ino, st.st_size)
        return attrs

    def readdir(self, path: str, fh: int) -> list[str]:
        """The backing folder's entries (the stash hidden)."""
        names = os.listdir(self._real(path))
        if path.strip("/") == "":
            names = [n for n in names if n != STASH]
        return [".", "..", *names]

    def readlink(self, path: str) -> str:
        """The link target."""
        return os.readlink(self._real(path))

    def statfs(self, path: str) -> dict[str, int]:
        """The backing filesystem's figures."""
        sv = os.statvfs(self.vol.backing)
        return {k: getattr(sv, k) for k in ("f_bavail", "f_bfree", "f_blocks", "f_bsize", "f_favail", "f_ffree",
                                            "f_files", "f_flag", "f_frsize", "f_namemax")}

    def access(self, path: str, amode: int) -> int:
        """Exists? (permissions are the kernel's, through default_permissions)."""
        os.lstat(self._real(path))
        return 0

    def chmod(self, path: str, mode: int) -> int:
        """Passed through, not modelled."""
        os.chmod(self._real(path), mode)
        return 0

    def chown(self, path: str, uid: int, gid: int) -> int:
        """Passed through, not modelled."""
        os.chown(self._real(path), uid, gid, follow_symlinks=False)
        return 0

    def utimens(self, path: str, times: tuple[int, int] | None = None) -> int:
        """Passed through, not modelled."""
        if times is None:
            os.utime(self._real(path), follow_symlinks=False)
        else:
            os.utime(self._real(path), ns=times, follow_symlinks=False)
        return 0

    # --- data -------------------------------------------------------------------------------------------

    def open(self, path: str, flags: int) -> int:
        """A read-write backing descriptor (read-only where the file refuses writing)."""
        real = self._real(path)
        try:
            fd = os.open(real, os.O_RDWR)
        except OSError:
            fd = os.open(real, os.O_RDONLY)
        if flags & os.O_TRUNC:
            self.truncate(path, 0)
        return fd

    def create(self, path: str, mode: int, fi: Any = None) -> int:
        """Create the backing file now, the caller's; journal it (a power loss before its folder's fsync
        removes it)."""
        real = self._real(path)
        with self.vol.lock:
            fd = os.open(real, os.O_RDWR | os.O_CREAT | os.O_EXCL, mode)
            self._created(real, mode, fd)
            if not self._pass(path):
                self.vol.record("create", (path,))
        return fd

    def read(self, path: str, size: int, offset: int, fh: int) -> bytes:
        """Live bytes."""
        with self.vol.lock:
            return self.vol.read(fh, size, offset)

    def write(self, path: str, data: bytes, offset: int, fh: int) -> int:
        """Into the cache (straight to the backing file for passthrough names)."""
        if self._pass(path):
            return os.pwrite(fh, data, offset)
        with self.vol.lock:
            return self.vol.write(fh, path, data, offset)

    def truncate(self, path: str, length: int, fh: int | None = None) -> int:
        """A cached size change."""
        fd = os.open(self._real(path), os.O_RDWR)
        try:
            if self._pass(path):
                os.ftruncate(fd, length)
            else:
                with self.vol.lock:
                    self.vol.truncate(fd, path, length)
        finally:
            os.close(fd)
        return 0

    def fsync(self, path: str, datasync: int, fh: int) -> int:
        """Write this file's cached changes to the backing file and fsync it (its name is not made durable)."""
        if self._pass(path):
            os.fsync(fh)
            return 0
        with self.vol.lock:
            fd = self.vol.take_for_sync(fh)
        if fd is not None:
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        return 0

    def fsyncdir(self, path: str, datasync: int, fh: int) -> int:
        """Commit the name journal up to the last change in this folder."""
        with self.vol.lock:
            self.vol.commit_dir(path)
        fd = os.open(self._real(path), os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        return 0

    def flush(self, path: str, fh: int) -> int:
        """close() makes nothing durable."""
        return 0

    def release(self, path: str, fh: int) -> int:
        """Close the backing descriptor (cached changes stay cached)."""
        os.close(fh)
        return 0

    # --- names ------------------------------------------------------------------------------------------

    def mkdir(self, path: str, mode: int) -> int:
        """Create the folder now, the caller's; journal it."""
        real = self._real(path)
        with self.vol.lock:
            os.mkdir(real, mode)
            self._created(real, mode)
            self.vol.record("mkdir", (path,))
        return 0

    def rmdir(self, path: str) -> int:
        """Move the (empty) folder to the stash; journal it."""
        real = self._real(path)
        with self.vol.lock:
            if os.listdir(real):
                raise OSError(errno.ENOTEMPTY, "directory not empty")
            self.vol.record("rmdir", (path,), self.vol.stash(path))
        return 0

    def unlink(self, path: str) -> int:
        """Move the file to the stash (open descriptors keep working); journal it."""
        real = self._real(path)
        with self.vol.lock:
            if self._pass(path):
                os.unlink(real)
            else:
                self.vol.record("unlink", (path,), self.vol.stash(path))
        return 0

    def rename(self, old: str, new: str) -> int:
        """Rename now, stashing what the new name replaces; journal it."""
        src, dst = self._real(old), self._real(new)
        with self.vol.lock:
            os.lstat(src)
            if os.path.isdir(dst) and not os.path.islink(dst) and os.listdir(dst):
                raise OSError(errno.ENOTEMPTY, "directory not empty")
            stashed = self.vol.stash(new) if os.path.lexists(dst) else None
            os.rename(src, dst)
            self.vol.record("rename", (old, new), stashed)
        return 0

    def symlink(self, target: str, source: str) -> int:
        """Create the link now, the caller's; journal it."""
        real = self._real(target)
        with self.vol.lock:
            os.symlink(source, real)
            self._created(real, 0)
            self.vol.record("symlink", (target,))
        return 0

    def link(self, target: str, source: str) -> int:
        """Hard links are not modelled."""
        raise OSError(errno.EPERM, "hard links are not supported by the lazy filesystem")

    def destroy(self, path: str) -> None:
        """Unmounted cleanly: write everything back, like a clean shutdown."""
        with self.vol.lock:
            self.vol.sync_all()
