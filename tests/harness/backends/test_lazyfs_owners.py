"""The lazy filesystem serves an unprivileged server as a real disk would.

The filesystem runs as root (the harness starts it); the server runs as another user, as PostgreSQL runs
as ``postgres``. That user must be able to enter the mount, what it creates must be its own (PostgreSQL
refuses a data directory it does not own), permissions are the kernel's, and a power loss keeps the owner of
what survives and removes what was never durable.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.backends.lazyfs.mount import LazyMount, fuse_mounts_under


def _user() -> pwd.struct_passwd | None:
    for name in ("postgres", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    return None


USER = _user()
pytestmark = [
    pytest.mark.skipif(not os.path.exists("/dev/fuse") or shutil.which("fusermount3") is None,
                       reason="needs /dev/fuse and fusermount3"),
    pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                       reason="needs root and setpriv to run a process as an unprivileged user"),
    pytest.mark.skipif(USER is None, reason="needs a postgres or nobody user"),
]

# Run as the unprivileged user: stdlib only. argv: MOUNT COMMAND. Prints one JSON object.
SCRIPT = r'''
import errno, json, os, sys

mnt, cmd = sys.argv[1], sys.argv[2]
d = os.path.join(mnt, "pgdata")


def put(rel, data, sync, mode=0o600):
    fd = os.open(os.path.join(d, rel), os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        os.write(fd, data)
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)


def sync_dir(rel):
    fd = os.open(os.path.join(d, rel), os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def tree():
    out = {}
    for top, dirs, files in os.walk(d):
        for name in dirs + files:
            p = os.path.join(top, name)
            st = os.lstat(p)
            entry = {"uid": st.st_uid, "gid": st.st_gid, "mode": st.st_mode}
            if os.path.islink(p):
                entry["target"] = os.readlink(p)
            elif os.path.isfile(p):
                with open(p, "rb") as fh:
                    entry["data"] = fh.read().decode()
            out[os.path.relpath(p, d)] = entry
    st = os.stat(d)
    out["."] = {"uid": st.st_uid, "gid": st.st_gid, "mode": st.st_mode}
    return out


if cmd == "write":
    os.umask(0o077)
    os.mkdir(d, 0o755)
    os.chmod(d, 0o700)                      # as PostgreSQL demands of its data directory
    put("PG_VERSION", b"17\n", True)
    os.mkdir(os.path.join(d, "base"))
    put("base/1", b"page one", True)
    os.symlink("base/1", os.path.join(d, "link"))
    os.umask(0o007)
    put("shared", b"group may write", True, 0o666)
    sync_dir("base")
    sync_dir(".")                           # everything so far is durable
    os.umask(0o077)
    put("postmaster.pid", b"4242\n", False)
    os.mkdir(os.path.join(d, "pg_wal_tmp"))
    put("pg_wal_tmp/seg", b"wal", True)     # data synced, but its names never were
    with open(os.path.join(d, "PG_VERSION"), "ab") as fh:
        fh.write(b"unsynced tail")
    print(json.dumps(tree()))
elif cmd == "read":
    print(json.dumps(tree()))
elif cmd == "touch":
    put("after", b"written after", True)
    sync_dir(".")
    print(json.dumps(tree()))
elif cmd == "setgid":
    put("f", b"x", False)
    os.mkdir(os.path.join(d, "sub"))
    print(json.dumps(tree()))
elif cmd == "probe":
    try:
        os.listdir(d)
        print(json.dumps({"error": None}))
    except OSError as e:
        print(json.dumps({"error": errno.errorcode[e.errno]}))
'''


def _python() -> str:
    return "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable


def _as(user: pwd.struct_passwd, mnt: str, cmd: str) -> dict[str, Any]:
    argv = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--init-groups",
            _python(), "-I", "-c", SCRIPT, mnt, cmd]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30, cwd="/")
    assert done.returncode == 0, f"{cmd} as {user.pw_name} failed: {done.stderr.strip()}"
    out: dict[str, Any] = json.loads(done.stdout)
    return out


@pytest.fixture
def place() -> Iterator[Path]:
    """A folder every user may pass through (pytest's own tmp folders are root's alone)."""
    top = Path(tempfile.mkdtemp(prefix="fencepost-lazyfs-owners-"))
    top.chmod(0o755)
    try:
        yield top
    finally:
        for point in fuse_mounts_under(str(top)):
            subprocess.run(["fusermount3", "-uz", point], capture_output=True)
        shutil.rmtree(top, ignore_errors=True)


def _start(place: Path, cached: bool) -> LazyMount:
    m = LazyMount(str(place / "backing"), str(place / "mnt"), str(place / "lazyfs.log"), 0.0,
                  ("events.jsonl",), cached=cached)
    m.start(dict(os.environ), os.getcwd(), detach=False)
    return m


def _owned(entries: dict[str, Any], names: list[str], user: pwd.struct_passwd) -> None:
    for name in names:
        assert (entries[name]["uid"], entries[name]["gid"]) == (user.pw_uid, user.pw_gid), name


def _backing_owner(place: Path, rel: str) -> tuple[int, int]:
    st = os.lstat(place / "backing" / "pgdata" / rel)
    return st.st_uid, st.st_gid


@pytest.mark.parametrize("cached", [False, True], ids=["direct", "cached"])
def test_an_unprivileged_server_owns_what_it_creates_and_a_power_loss_keeps_the_owner(
        place: Path, cached: bool) -> None:
    assert USER is not None
    m = _start(place, cached)
    try:
        os.chown(m.mount, USER.pw_uid, USER.pw_gid)  # the harness hands the data folder to the server's user
        written = _as(USER, m.mount, "write")
        names = [".", "PG_VERSION", "base", "base/1", "link", "shared", "postmaster.pid", "pg_wal_tmp",
                 "pg_wal_tmp/seg"]
        _owned(written, names, USER)
        assert stat.S_IMODE(written["."]["mode"]) == 0o700
        assert stat.S_IMODE(written["postmaster.pid"]["mode"]) == 0o600
        assert stat.S_IMODE(written["shared"]["mode"]) == 0o660  # the caller's umask, and only it
        assert written["PG_VERSION"]["data"] == "17\nunsynced tail"
        assert written["link"]["target"] == "base/1" and stat.S_ISLNK(written["link"]["mode"])
        for rel in names[1:]:
            assert _backing_owner(place, rel) == (USER.pw_uid, USER.pw_gid), rel

        if USER.pw_name != "nobody":  # permissions are the kernel's: another user cannot enter a 0700 folder
            assert _as(pwd.getpwnam("nobody"), m.mount, "probe") == {"error": "EACCES"}

        out = m.drop()
        assert {"create /pgdata/postmaster.pid", "mkdir /pgdata/pg_wal_tmp",
                "create /pgdata/pg_wal_tmp/seg"} <= set(out["undone_names"])
        assert not any("not undone" in u for u in out["undone_names"]), out["undone_names"]
        if cached:  # as the local backend does: a fresh mount holds no page of what was lost
            m.stop()
            m.start(dict(os.environ), os.getcwd(), detach=False)

        after = _as(USER, m.mount, "read")
        assert sorted(after) == [".", "PG_VERSION", "base", "base/1", "link", "shared"]
        _owned(after, list(after), USER)
        assert after["PG_VERSION"]["data"] == "17\n" and after["base/1"]["data"] == "page one"
        assert stat.S_IMODE(after["."]["mode"]) == 0o700
        for rel in ("postmaster.pid", "pg_wal_tmp"):
            assert not os.path.lexists(place / "backing" / "pgdata" / rel), rel
        for rel in ("PG_VERSION", "base", "base/1", "link", "shared"):
            assert _backing_owner(place, rel) == (USER.pw_uid, USER.pw_gid), rel

        again = _as(USER, m.mount, "touch")  # the server starts again on what survived
        assert again["after"]["data"] == "written after"
        _owned(again, ["after"], USER)
        assert _backing_owner(place, "after") == (USER.pw_uid, USER.pw_gid)
    finally:
        m.stop()
    assert not fuse_mounts_under(str(place))


def test_a_set_group_id_folder_gives_its_group(place: Path) -> None:
    assert USER is not None
    m = _start(place, cached=False)
    try:
        folder = Path(m.mount) / "pgdata"
        folder.mkdir()
        os.chown(folder, USER.pw_uid, 0)  # the user's folder, root's group
        folder.chmod(0o2770)
        made = _as(USER, m.mount, "setgid")
        assert (made["f"]["uid"], made["f"]["gid"]) == (USER.pw_uid, 0)
        assert (made["sub"]["uid"], made["sub"]["gid"]) == (USER.pw_uid, 0)
        assert made["sub"]["mode"] & stat.S_ISGID  # and passes the bit on, as a disk does
    finally:
        m.stop()


def test_entries_root_creates_are_owned_by_root(place: Path) -> None:
    m = _start(place, cached=False)
    try:
        (Path(m.mount) / "by-root").mkdir()
        (Path(m.mount) / "by-root" / "f").write_bytes(b"x")
        assert _owner(place / "backing" / "by-root") == (0, 0)
        assert _owner(place / "backing" / "by-root" / "f") == (0, 0)
    finally:
        m.stop()


def _owner(path: Path) -> tuple[int, int]:
    st = os.lstat(path)
    return st.st_uid, st.st_gid
