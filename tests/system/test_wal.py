"""The WAL detects every kind of damage instead of trimming it; the state file is replaced atomically."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import pytest

from harness.backends.lazyfs.mount import LazyMount
from system import statefile
from system.wal import Wal, WalDamaged


def entries(n: int, epoch: int = 1) -> list[dict]:
    return [{"e": epoch, "o": i, "v": {"op": "put", "key": f"k{i}", "value": i}} for i in range(n)]


def write_log(path: Path, n: int) -> None:
    wal, got = Wal.open(str(path))
    assert got == []
    wal.append(entries(n))
    wal.sync()
    wal.close()


def test_round_trip_and_truncate(tmp_path: Path) -> None:
    p = tmp_path / "wal"
    write_log(p, 5)
    wal, got = Wal.open(str(p))
    assert got == entries(5)
    wal.truncate_after(2)
    wal.append([{"e": 2, "o": 3, "v": {"op": "noop"}}])
    wal.sync()
    wal.close()
    _, got = Wal.open(str(p))
    assert [(e["e"], e["o"]) for e in got] == [(1, 0), (1, 1), (1, 2), (2, 3)]


def test_truncated_record_is_damage(tmp_path: Path) -> None:
    p = tmp_path / "wal"
    write_log(p, 5)
    size = p.stat().st_size
    os.truncate(p, size - 3)
    with pytest.raises(WalDamaged, match="truncated record"):
        Wal.open(str(p))
    os.truncate(p, size - (size - 5))  # a torn header
    with pytest.raises(WalDamaged, match="truncated record header"):
        Wal.open(str(p))


def test_bad_checksum_is_damage(tmp_path: Path) -> None:
    p = tmp_path / "wal"
    write_log(p, 5)
    data = bytearray(p.read_bytes())
    data[-2] ^= 0x01
    p.write_bytes(bytes(data))
    with pytest.raises(WalDamaged, match="bad checksum"):
        Wal.open(str(p))


def test_out_of_order_offsets_are_damage(tmp_path: Path) -> None:
    p = tmp_path / "wal"
    wal, _ = Wal.open(str(p))
    wal.append([{"e": 1, "o": 0, "v": None}, {"e": 1, "o": 2, "v": None}])
    wal.close()
    with pytest.raises(WalDamaged, match="expected 1"):
        Wal.open(str(p))


def test_statefile_is_replaced_whole(tmp_path: Path) -> None:
    p = tmp_path / "state.json"
    assert statefile.read_json(str(p)) is None
    statefile.write_atomic(str(p), {"epoch": 1})
    statefile.write_atomic(str(p), {"epoch": 2})
    assert statefile.read_json(str(p)) == {"epoch": 2}
    assert not list(tmp_path.glob("*.tmp"))


def test_two_threads_replacing_one_statefile_never_collide(tmp_path: Path) -> None:
    """A background checkpoint and a tombstoning write the same ``state.json`` from two threads; with one
    shared temp name one rename took the other's file away (FileNotFoundError in the clean default
    campaign at seed 2, CI at 7360a65), and the failed delete left a replica serving with its WAL closed."""
    p = str(tmp_path / "state.json")
    errors: list[BaseException] = []

    def writer(me: int) -> None:
        for i in range(400):
            try:
                statefile.write_atomic(p, {"writer": me, "i": i}, durable=False)
            except BaseException as e:  # every failure is the finding
                errors.append(e)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert statefile.read_json(p)["i"] == 399
    assert not list(tmp_path.glob("*.tmp"))


@pytest.mark.skipif(not os.path.exists("/dev/fuse") or shutil.which("fusermount3") is None,
                    reason="needs /dev/fuse and fusermount3")
def test_what_a_reopened_log_returns_survives_a_power_loss(tmp_path: Path) -> None:
    """A process killed between a write and its fsync: its successor reads the records from the page cache and
    counts them durable, so they must be durable once it has them; a later power loss may not take them."""
    lazy = LazyMount(str(tmp_path / "backing"), str(tmp_path / "mnt"), str(tmp_path / "lazyfs.log"), 0.0, ())
    lazy.start(dict(os.environ), os.getcwd(), detach=False)
    try:
        p = Path(lazy.mount) / "wal"
        write_log(p, 3)
        directory = os.open(lazy.mount, os.O_RDONLY)
        os.fsync(directory)  # the file's name is durable, as the replica's tablet folder makes it
        os.close(directory)
        killed, _ = Wal.open(str(p))
        killed.append(entries(5)[3:])  # written, never fsynced: the process dies here
        killed.close()
        successor, got = Wal.open(str(p))
        successor.close()
        assert got == entries(5)
        lazy.drop()
        _, after = Wal.open(str(p))
        assert after == entries(5), "a power loss took entries the successor had counted durable"
    finally:
        lazy.stop()
