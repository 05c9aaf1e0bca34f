"""WAL damage as the corrupt fault applies it is always detected by the system's own WAL reader."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from harness.backends.file_damage import KINDS, damage_wal, pick_wal, record_spans
from system.wal import Wal, WalDamaged


def make_wal(tmp_path: Path, n: int = 20) -> Path:
    path = tmp_path / "tablets" / "0" / "wal"
    path.parent.mkdir(parents=True)
    wal, _ = Wal.open(str(path))
    wal.append([{"e": 1, "o": i, "v": {"op": "put", "key": f"k{i}", "value": i}} for i in range(n)])
    wal.sync()
    wal.close()
    return path


def test_an_undamaged_wal_opens_with_every_entry(tmp_path: Path) -> None:
    path = make_wal(tmp_path)
    assert len(record_spans(path.read_bytes())) == 20
    wal, entries = Wal.open(str(path))
    wal.close()
    assert [e["o"] for e in entries] == list(range(20))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", range(5))
def test_damage_is_detected_when_the_wal_is_opened(tmp_path: Path, kind: str, seed: int) -> None:
    path = make_wal(tmp_path)
    rng = random.Random(seed)
    assert pick_wal(tmp_path, rng) == path
    done = damage_wal(path, kind, rng)
    assert done["kind"] == kind
    with pytest.raises(WalDamaged):
        Wal.open(str(path))


def test_unknown_kind_and_empty_wal_are_refused(tmp_path: Path) -> None:
    path = make_wal(tmp_path)
    with pytest.raises(ValueError, match="unknown damage"):
        damage_wal(path, "melt", random.Random(1))
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    with pytest.raises(ValueError, match="no whole record"):
        damage_wal(empty, "truncate", random.Random(1))
