"""File damage as the corrupt fault applies it is always detected: WAL damage by the system's own WAL reader,
lost consensus metadata as disk loss (the node refuses to start under its UUID)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from fencepost_reference.faults.file_damage import (
    KINDS,
    WAL_KINDS,
    damage_tablet,
    damage_wal,
    pick_wal,
    record_spans,
)

from system import admin, identity, rules, statefile, superblock
from system.launcher import pick_port
from system.node import EXIT_DISK_LOSS
from system.rules import READY
from system.superblock import DiskLoss
from system.wal import Wal, WalDamaged

REPO = Path(__file__).resolve().parents[4]


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


@pytest.mark.parametrize("kind", WAL_KINDS)
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


def make_tablet(tmp_path: Path) -> Path:
    """A node data directory holding one READY tablet with a WAL, a superblock and consensus metadata."""
    ident = identity.check(str(tmp_path), "n1")  # formats the empty directory
    wal = make_wal(tmp_path)
    superblock.write(str(wal.parent), READY)
    statefile.write_atomic(str(wal.parent / "state.json"),
                           {"epoch": 4, "status": "follower", "head": [1, 19], "commit": 19, "leader": "n2"})
    assert identity.check(str(tmp_path), "n1").uuid == ident.uuid
    return wal.parent


def test_every_kind_damages_a_tablet_with_data(tmp_path: Path) -> None:
    assert KINDS == ("truncate", "bitflip", "delete-metadata")
    tablet = make_tablet(tmp_path)
    done = damage_tablet(tmp_path, "delete-metadata", random.Random(1))
    assert done == {"kind": "delete-metadata", "file": (tablet / "state.json").relative_to(tmp_path).as_posix()}
    assert not (tablet / "state.json").exists() and (tablet / "wal").exists()
    with pytest.raises(ValueError, match="unknown damage"):
        damage_tablet(tmp_path, "melt", random.Random(1))
    assert damage_tablet(tmp_path / "empty", "delete-metadata", random.Random(1))["file"] is None


def test_lost_consensus_metadata_is_disk_loss(tmp_path: Path) -> None:
    tablet = make_tablet(tmp_path)
    damage_tablet(tmp_path, "delete-metadata", random.Random(1))
    with pytest.raises(DiskLoss, match="consensus metadata missing"):
        identity.check(str(tmp_path), "n1")
    with pytest.raises(DiskLoss, match="consensus metadata missing"):
        superblock.startup(str(tmp_path), 0, str(tablet))


def test_a_wal_without_superblock_or_metadata_is_disk_loss_not_a_fresh_tablet(tmp_path: Path) -> None:
    """Losing the superblock too must not make the tablet look new (epoch -1 over an old log)."""
    tablet = make_tablet(tmp_path)
    damage_tablet(tmp_path, "delete-metadata", random.Random(1))
    Path(superblock.path(str(tablet))).unlink()
    with pytest.raises(DiskLoss, match="data files without a superblock"):
        superblock.startup(str(tmp_path), 0, str(tablet))


@pytest.mark.parametrize(("sb", "cm", "data", "lost"), [
    (True, True, True, None), (False, False, False, None), (True, True, False, None),
    (True, False, True, "consensus metadata missing"), (True, False, False, "consensus metadata missing"),
    (False, False, True, "data files without a superblock"), (False, True, True, "data files without a superblock"),
])
def test_the_rule(sb: bool, cm: bool, data: bool, lost: str | None) -> None:
    assert rules.tablet_files_lost(sb, cm, data) == lost


def test_a_node_with_lost_metadata_exits_for_disk_loss_and_reformat_gives_it_a_new_uuid(tmp_path: Path) -> None:
    make_tablet(tmp_path)
    old = identity.check(str(tmp_path), "n1").uuid
    damage_tablet(tmp_path, "delete-metadata", random.Random(1))
    port = pick_port(["127.0.0.1"])
    argv = [sys.executable, "-m", "system.node", "--id", "n1", "--port", str(port), "--data", str(tmp_path)]
    refused = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=REPO)
    assert refused.returncode == EXIT_DISK_LOSS
    assert "disk loss" in refused.stderr and "consensus metadata missing" in refused.stderr
    proc = subprocess.Popen([*argv, "--reformat"], stdout=subprocess.PIPE, text=True, cwd=REPO)
    try:
        assert proc.stdout is not None
        started = json.loads(proc.stdout.readline())
        assert started["uuid"] != old
        hello = admin.call_sync("127.0.0.1", port, "hello", {}, timeout=5.0)
        assert hello["uuid"] == started["uuid"] and not hello["tablets"]  # nothing from the old disk is served
    finally:
        proc.kill()
        proc.wait(10)
        if proc.stdout is not None:
            proc.stdout.close()
    kinds = [json.loads(line)["event"] for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert kinds.count("disk_loss") == 2 and kinds.count("reformatted") == 1
    assert kinds.index("reformatted") > max(i for i, k in enumerate(kinds) if k == "disk_loss")
