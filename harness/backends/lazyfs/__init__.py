"""A fault-injecting FUSE filesystem that forgets what was never fsynced, as a power loss would.

``python -m harness.backends.lazyfs --backing DIR --mount DIR --control NAME`` mounts ``DIR`` (the
mount) over ``DIR`` (the backing directory). The backing directory is "the disk": what is there
survives a power loss. Everything else lives only in this process's memory:

- **Data.** ``write`` and ``truncate`` go to a per-file cache; reads see them. ``fsync``/``fdatasync``
  of a file writes that file's cached changes to the backing file (and fsyncs it). ``fsync`` of a
  file does *not* make its name durable (POSIX does not promise it; ext4 and xfs happen to).
- **Names.** ``create``, ``mkdir``, ``rename``, ``unlink``, ``rmdir`` and ``symlink`` are applied to
  the backing directory at once, but recorded in an ordered journal with what undoes them (a
  replaced or removed file waits in a hidden stash). ``fsync`` of a directory commits the journal up
  to the last change in that directory, everything before it included (one ordered journal, as in
  ext4 or xfs). So a rename whose directory was never fsynced is lost by a power loss: the old file
  comes back. Committing a create or rename first writes back the data of the file it names (ext4's
  default ``data=ordered``), so a durable name never shows an empty file.
- **Writeback.** With ``--writeback S`` (the launcher uses
  :data:`harness.backends.lazyfs.mount.DEFAULT_WRITEBACK_S`), changes older
  than S seconds are written back in order, as the kernel's flusher would. 0 keeps them until fsync.

On command (the control socket, see :mod:`harness.backends.lazyfs.control`) it **drops** every change
not yet durable: cached data is forgotten and the journal is undone newest first. With ``tear`` the
file that received the last write is first written back up to a random byte inside that write, as a
crash in the middle of writeback leaves it. Ownership, modes and times pass straight through and are
not modelled. Files whose name matches ``--passthrough GLOB`` (the node's ``events.jsonl``: the test's
own observations, not the system's state) are written straight to the backing directory.

The mount uses ``direct_io`` and zero attribute and entry timeouts, so the kernel caches nothing and
every read sees the cache, also after a drop. A clean unmount (SIGTERM, ``fusermount3 -u``) writes
every pending change back first, like a clean shutdown.

Run as root (as the harness runs it), the mount is ``allow_other``, so a server running as another user
(PostgreSQL as ``postgres``) can use it. The kernel checks permissions (``default_permissions``) as on a
real disk, and what a process creates (``create``, ``mkdir``, ``symlink``) is that process's, in the
backing directory too, so an entry a drop keeps keeps its owner. A non-root mounter leaves
``allow_other`` off (it would need ``user_allow_other`` in ``/etc/fuse.conf``): then only it can use the
mount.
"""

from __future__ import annotations

from harness.backends.lazyfs.mount import DEFAULT_WRITEBACK_S

__all__ = ["DEFAULT_WRITEBACK_S"]
