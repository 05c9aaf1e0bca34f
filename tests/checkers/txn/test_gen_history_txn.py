"""The transactional history generator: well-formed, deterministic, contended, and its plants where it says."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from checkers.gen_history_plants import PLANT_TYPES
from checkers.gen_history_txn import TxnHistoryGenerator, write_txn_jsonl
from harness.cli.main import main
from harness.history.formats import load_history
from harness.history.op import Op, OpType


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        main(list(args))
        code = 0
    except SystemExit as e:
        code = int(e.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("workload", ["list-append", "rw-register"])
def test_the_file_is_the_ops_and_a_well_formed_history(tmp_path: Path, workload: str) -> None:
    gen = TxnHistoryGenerator(workload, txns=3000, processes=10, seed=4, anomalies=len(PLANT_TYPES[workload]))
    path = tmp_path / "h.jsonl"
    write_txn_jsonl(gen, path)
    read = load_history(path)  # validates: indices, times, one open op per process, no invoke after info
    assert read == list(gen)
    outcomes = Counter(op.type for op in read)
    invokes = outcomes[OpType.INVOKE]
    assert invokes == 3000 + sum(len(p.indices) for p in gen.planted) // 2
    assert invokes == outcomes[OpType.OK] + outcomes[OpType.FAIL] + outcomes[OpType.INFO]
    assert outcomes[OpType.FAIL] > 0 and outcomes[OpType.INFO] > 0
    writes = {"list-append": "append", "rw-register": "w"}[workload]
    fs = Counter(m[0] for op in read if op.type is OpType.INVOKE for m in op.value)
    assert set(fs) == {"r", writes} and 0.4 < fs["r"] / sum(fs.values()) < 0.6
    assert max(len(op.value) for op in read) == 4 and min(len(op.value) for op in read) == 1


def test_same_seed_same_file(tmp_path: Path) -> None:
    for name in ("a", "b"):
        write_txn_jsonl(TxnHistoryGenerator(txns=500, seed=9, anomalies=3), tmp_path / f"{name}.jsonl")
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    write_txn_jsonl(TxnHistoryGenerator(txns=500, seed=10, anomalies=3), tmp_path / "c.jsonl")
    assert (tmp_path / "a.jsonl").read_bytes() != (tmp_path / "c.jsonl").read_bytes()


def test_keys_contend_retire_and_values_are_unique_per_key() -> None:
    ops = list(TxnHistoryGenerator("list-append", txns=4000, processes=20, keys=8, writes_per_key=16, seed=2))
    writes = [(m[1], m[2]) for op in ops if op.type is OpType.INVOKE for m in op.value if m[0] == "append"]
    assert len(writes) == len(set(writes))  # unique per key
    per_key = Counter(k for k, _ in writes)
    assert max(per_key.values()) == 16 and len(per_key) > 100  # keys retire after 16 writes
    concurrent = max(_open_at_once(ops), default=0)
    assert concurrent >= 10
    # Without retirement, key k is the k-th slot's: each slot half as likely as the one before.
    ops = list(TxnHistoryGenerator("rw-register", txns=4000, keys=8, writes_per_key=10**9, seed=2))
    drawn = Counter(m[1] for op in ops if op.type is OpType.INVOKE for m in op.value)
    share = [drawn[k] / sum(drawn.values()) for k in range(8)]
    assert 0.45 < share[0] < 0.55 and 0.2 < share[1] < 0.3 and share[7] < 0.01


def test_reads_are_what_a_serial_store_returns() -> None:
    """Every ok read of a key is a prefix of the longest read of that key (list-append's version order)."""
    ops = list(TxnHistoryGenerator("list-append", txns=3000, processes=15, seed=6))
    reads: dict[int, list[list[int]]] = {}
    for op in ops:
        if op.type is OpType.OK:
            for f, k, v in op.value:
                if f == "r":
                    reads.setdefault(k, []).append(v)
    assert reads
    for values in reads.values():
        longest = max(values, key=len)
        assert all(longest[: len(v)] == v for v in values)


def test_plants_sit_on_keys_of_their_own_at_the_indices_reported() -> None:
    gen = TxnHistoryGenerator("list-append", txns=2000, processes=8, seed=1, anomalies=30)
    ops = list(gen)
    assert [p.type for p in gen.planted] == [PLANT_TYPES["list-append"][i % 15] for i in range(30)]
    planted_keys = {k for p in gen.planted for k in p.keys}
    at = {i for p in gen.planted for i in p.indices}
    for op in ops:
        keys = {m[1] for m in op.value}
        assert (op.index in at) == bool(keys & planted_keys), op
    first = ops[gen.planted[0].indices[0]]
    assert first.type is OpType.INVOKE and first.value == [["append", gen.planted[0].keys[0], 1],
                                                           ["append", gen.planted[0].keys[1], 1]]


def test_plants_without_transactions_around_them() -> None:
    gen = TxnHistoryGenerator("rw-register", txns=0, anomalies=2, anomaly_types=("G2-item",))
    ops = list(gen)
    assert [p.type for p in gen.planted] == ["G2-item", "G2-item"] and len(ops) == 8


def test_bad_settings_are_refused_in_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = str(tmp_path / "h.jsonl")
    code, _, err = cli(capsys, "gen-history", "--model", "rw-register", "--txns", "10", "--anomalies", "1",
                       "--anomaly-types", "G0,incompatible-order", "--out", out)
    assert code == 3 and err.count("\n") == 1 and "cannot plant 'incompatible-order' in a rw-register" in err
    code, _, err = cli(capsys, "gen-history", "--model", "list-append", "--out", out)
    assert code == 3 and "needs --txns" in err
    code, _, err = cli(capsys, "gen-history", "--model", "list-append", "--txns", "5", "--keys", "0", "--out", out)
    assert code == 3 and "keys must be at least 1" in err


def test_the_command_says_where_each_plant_is(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "h.jsonl"
    code, text, _ = cli(capsys, "gen-history", "--model", "list-append", "--txns", "300", "--processes", "6",
                        "--anomalies", "2", "--anomaly-types", "G1c,internal", "--seed", "3", "--out", str(out))
    assert code == 0
    lines = out.read_text().splitlines()
    planted = [line for line in text.splitlines() if "planted" in line]
    assert len(planted) == 2 and "planted G1c at lines" in planted[0]
    first, last = (int(n) for n in planted[1].split(" at lines ")[1].split(",")[0].split("-"))
    internal = [json.loads(line) for line in lines[first - 1 : last]]
    assert [op["type"] for op in internal] == ["invoke", "ok"]
    key = internal[0]["value"][0][1]
    assert internal[1]["value"] == [["append", key, 1], ["r", key, []]]


def _open_at_once(ops: list[Op]) -> list[int]:
    """How many transactions were open after each event."""
    open_now, counts = 0, []
    for op in ops:
        open_now += 1 if op.type is OpType.INVOKE else -1
        counts.append(open_now)
    return counts
