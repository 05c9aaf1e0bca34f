"""The lazy filesystem on a real FUSE mount: what a drop (power loss) keeps and what it loses."""

from __future__ import annotations

import json
import os
import random
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.backends.lazyfs.mount import LazyMount, fuse_mounts_under

pytestmark = pytest.mark.skipif(not os.path.exists("/dev/fuse") or shutil.which("fusermount3") is None,
                                reason="needs /dev/fuse and fusermount3")


def _mount(tmp: Path, writeback: float = 0.0) -> LazyMount:
    m = LazyMount(str(tmp / "backing"), str(tmp / "mnt"), str(tmp / "lazyfs.log"), writeback, ("events.jsonl",))
    m.start(dict(os.environ), os.getcwd(), detach=False)
    return m


@pytest.fixture
def lazy(tmp_path: Path) -> Iterator[LazyMount]:
    m = _mount(tmp_path)
    try:
        yield m
    finally:
        m.stop()
        assert not fuse_mounts_under(str(tmp_path))


def _write(path: Path, data: bytes, fsync: bool = False) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, data)
        if fsync:
            os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def test_unsynced_write_is_lost_and_synced_one_kept(lazy: LazyMount) -> None:
    mnt = Path(lazy.mount)
    _write(mnt / "kept", b"durable", fsync=True)
    _fsync_dir(mnt)
    _write(mnt / "lost", b"volatile")
    assert (mnt / "lost").read_bytes() == b"volatile"  # reads see the cache
    out = lazy.drop()
    assert out["dropped_writes"] == 1 and out["dropped_bytes"] == len(b"volatile")
    assert (mnt / "kept").read_bytes() == b"durable"
    assert not (mnt / "lost").exists()  # its creation was never made durable either


def test_fsync_of_a_file_does_not_make_its_name_durable(lazy: LazyMount) -> None:
    mnt = Path(lazy.mount)
    _write(mnt / "f", b"data", fsync=True)
    lazy.drop()
    assert not (mnt / "f").exists()


def test_committing_a_name_writes_its_data_first(lazy: LazyMount) -> None:
    mnt = Path(lazy.mount)
    _write(mnt / "f", b"data")  # never fsynced, but its folder is: data=ordered writes it back first
    _fsync_dir(mnt)
    _write(mnt / "g", b"more")
    lazy.drop()
    assert (mnt / "f").read_bytes() == b"data"
    assert not (mnt / "g").exists()


def test_overwrite_of_a_synced_file_is_lost(lazy: LazyMount) -> None:
    mnt = Path(lazy.mount)
    _write(mnt / "f", b"old contents", fsync=True)
    _fsync_dir(mnt)
    with open(mnt / "f", "r+b") as fh:
        fh.write(b"NEW")
    assert (mnt / "f").read_bytes() == b"NEW contents"
    lazy.drop()
    assert (mnt / "f").read_bytes() == b"old contents"


def _write_atomic(path: Path, obj: object, sync_dir: bool) -> None:
    tmp = path.with_name(path.name + ".tmp")
    _write(tmp, json.dumps(obj).encode(), fsync=True)
    os.replace(tmp, path)
    if sync_dir:
        _fsync_dir(path.parent)


def test_rename_without_directory_fsync_is_lost(lazy: LazyMount) -> None:
    mnt = Path(lazy.mount)
    (mnt / "t").mkdir()
    _write_atomic(mnt / "t" / "state.json", {"epoch": 1}, sync_dir=True)
    _fsync_dir(mnt)
    _write_atomic(mnt / "t" / "state.json", {"epoch": 2}, sync_dir=False)
    assert json.loads((mnt / "t" / "state.json").read_text()) == {"epoch": 2}
    out = lazy.drop()
    assert any(u.startswith("rename") for u in out["undone_names"])
    assert json.loads((mnt / "t" / "state.json").read_text()) == {"epoch": 1}
    assert sorted(os.listdir(mnt / "t")) == ["state.json"]


def test_directory_fsync_commits_every_earlier_name_change(lazy: LazyMount) -> None:
    mnt = Path(lazy.mount)
    (mnt / "a").mkdir()
    (mnt / "b").mkdir()
    _write(mnt / "a" / "x", b"x", fsync=True)
    _write(mnt / "b" / "z", b"z", fsync=True)
    _fsync_dir(mnt / "b")  # one ordered journal: a's changes came first, so they commit too
    _write(mnt / "a" / "y", b"y", fsync=True)
    lazy.drop()
    assert (mnt / "a" / "x").read_bytes() == b"x" and (mnt / "b" / "z").read_bytes() == b"z"
    assert not (mnt / "a" / "y").exists()


def test_unlink_and_rmdir_are_undone(lazy: LazyMount) -> None:
    mnt = Path(lazy.mount)
    (mnt / "d").mkdir()
    _write(mnt / "d" / "f", b"keep me", fsync=True)
    _fsync_dir(mnt / "d")
    os.unlink(mnt / "d" / "f")
    os.rmdir(mnt / "d")
    assert not (mnt / "d").exists()
    assert ".lazyfs-stash" not in os.listdir(mnt)
    lazy.drop()
    assert (mnt / "d" / "f").read_bytes() == b"keep me"


def test_tear_keeps_part_of_the_last_write(lazy: LazyMount) -> None:
    mnt = Path(lazy.mount)
    _write(mnt / "wal", b"A" * 100, fsync=True)
    _fsync_dir(mnt)
    with open(mnt / "wal", "ab") as fh:
        fh.write(b"B" * 50)
        fh.flush()
        fh.write(b"C" * 80)
    out = lazy.drop(tear=True, seed=3)
    torn = out["torn"]
    assert torn["file"] == "/wal" and torn["offset"] == 150 and torn["of"] == 80 and 1 <= torn["kept"] < 80
    assert (mnt / "wal").read_bytes() == b"A" * 100 + b"B" * 50 + b"C" * torn["kept"]


def test_passthrough_files_survive_a_drop(lazy: LazyMount) -> None:
    mnt = Path(lazy.mount)
    with open(mnt / "events.jsonl", "a") as fh:
        fh.write('{"event": "x"}\n')
    lazy.drop()
    assert (mnt / "events.jsonl").read_text() == '{"event": "x"}\n'


def test_reads_match_a_plain_file_under_random_writes_and_truncates(lazy: LazyMount, tmp_path: Path) -> None:
    rng = random.Random(11)
    plain, mounted = tmp_path / "plain", Path(lazy.mount) / "f"
    fds = [os.open(p, os.O_RDWR | os.O_CREAT, 0o644) for p in (plain, mounted)]
    try:
        for step in range(300):
            r = rng.random()
            if r < 0.7:
                data, off = rng.randbytes(rng.randint(1, 300)), rng.randint(0, 2000)
                for fd in fds:
                    os.pwrite(fd, data, off)
            elif r < 0.85:
                size = rng.randint(0, 2000)
                for fd in fds:
                    os.ftruncate(fd, size)
            else:
                os.fsync(fds[1])
            if step % 10 == 0:
                off, n = rng.randint(0, 2500), rng.randint(0, 800)
                assert os.pread(fds[1], n, off) == os.pread(fds[0], n, off)
        assert mounted.read_bytes() == plain.read_bytes()
        assert os.fstat(fds[1]).st_size == os.fstat(fds[0]).st_size
    finally:
        for fd in fds:
            os.close(fd)


def test_writeback_makes_old_changes_durable(tmp_path: Path) -> None:
    m = _mount(tmp_path, writeback=0.3)
    try:
        mnt = Path(m.mount)
        _write(mnt / "old", b"old")
        time.sleep(1.2)
        _write(mnt / "new", b"new")
        m.drop()
        assert (mnt / "old").read_bytes() == b"old"
        assert not (mnt / "new").exists()
    finally:
        m.stop()


def test_clean_unmount_writes_everything_back(tmp_path: Path) -> None:
    m = _mount(tmp_path)
    try:
        _write(Path(m.mount) / "f", b"pending")
        stats = m.stats()
        assert stats["pending_writes"] == 1 and stats["pending_names"] == 1
    finally:
        m.stop()
    assert (tmp_path / "backing" / "f").read_bytes() == b"pending"
    assert not fuse_mounts_under(str(tmp_path))
