"""A big file checked in shares, end to end in several processes, gives what one process gives: the
same verdicts, keys and counterexamples, and the same errors, line numbers included, for bad input."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checkers.gen_history import HistoryGenerator
from checkers.linearizability import sharded
from checkers.linearizability.run import FileOptions, check_file
from harness.cli.main import cli
from harness.history.formats import write_history

ALL = FileOptions(all_violations=True)
FIELDS = ("valid", "model", "format", "ops", "partitions", "invalid_keys", "unknown_keys", "failures")


@pytest.fixture
def shares(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every file is big enough to share out; the list counts the files checked in shares."""
    monkeypatch.setattr(sharded, "SHARDED_MIN_EVENTS", 0)
    monkeypatch.setattr(sharded, "SHARDED_MIN_BYTES", 0)
    used: list[int] = []
    real = sharded.check_sharded

    def spy(*args: Any, **kwargs: Any) -> Any:
        got = real(*args, **kwargs)
        used.append(got is not None)
        return got

    monkeypatch.setattr(sharded, "check_sharded", spy)
    return used


def _same(a: Any, b: Any) -> None:
    assert {k: a.summary[k] for k in FIELDS} == {k: b.summary[k] for k in FIELDS}
    assert [dataclasses.asdict(c) for c in a.counterexamples] == [dataclasses.asdict(c) for c in b.counterexamples]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10**6), keys=st.sampled_from([2, 7, 60]), processes=st.integers(1, 9),
       anomalies=st.integers(0, 2), info_rate=st.sampled_from([0.0, 0.05, 0.3]), unique=st.booleans(),
       suffix=st.sampled_from([".jsonl", ".parquet"]), jobs=st.sampled_from([2, 3]))
def test_shares_give_the_one_process_verdicts(tmp_path: Path, shares: list[int], seed: int, keys: int,
                                              processes: int, anomalies: int, info_rate: float, unique: bool,
                                              suffix: str, jobs: int) -> None:
    gen = HistoryGenerator(400, keys=keys, processes=processes, seed=seed, anomalies=anomalies,
                           info_rate=info_rate, unique_values=unique)
    path = str(tmp_path / f"h{suffix}")
    write_history(gen, path)
    used = len(shares)
    got = check_file(path, ALL, workers=jobs)
    assert shares[used:] == [True]
    _same(got, check_file(path, ALL, workers=1))
    assert sorted(got.summary["invalid_keys"]) == sorted(gen.injected)


def test_first_violation_stops_the_shares(tmp_path: Path, shares: list[int]) -> None:
    gen = HistoryGenerator(3000, keys=200, processes=6, seed=4, anomalies=5)
    path = str(tmp_path / "h.parquet")
    write_history(gen, path)
    got = check_file(path, FileOptions(), workers=2)
    assert shares == [True]
    assert got.valid is False and 1 <= len(got.summary["invalid_keys"]) <= 2
    assert set(got.summary["invalid_keys"]) <= set(gen.injected)
    assert got.summary["partitions"] == 200 and got.summary["ops"] == 3000


def _break_line(path: Path, line: int, new: str) -> None:
    lines = path.read_text().splitlines(keepends=True)
    lines[line - 1] = new + "\n"
    path.write_text("".join(lines))


@pytest.mark.parametrize("bad", [
    '{"index": 5000, "time": 1, "process": 0, "type": "ok", "f": "read"',  # torn JSON
    '{"index": 2501, "time": 10, "process": 0, "type": "ok", "f": "read", "key": 3, "value": [1}',
    '{"index": 2501, "time": 10, "process": "zero", "type": "ok", "f": "read"}',
    '{"index": 2501, "time": 1, "process": 0, "type": "ok", "f": "read", "key": 3}',  # time goes back
])
def test_a_bad_line_in_a_middle_share_is_named(tmp_path: Path, shares: list[int], bad: str) -> None:
    path = tmp_path / "h.jsonl"
    write_history(HistoryGenerator(2000, keys=30, processes=5, seed=2), path)
    _break_line(path, 2501, bad)
    got = check_file(str(path), ALL, workers=3)
    want = check_file(str(path), ALL, workers=1)
    assert got.valid is None and got.errors == want.errors
    assert got.errors[0].startswith(f"{path}:2501: ")
    result = CliRunner().invoke(cli, ["check", str(path), "--engine", "local", "--json"])
    assert result.exit_code == 3
    assert f"{path}:2501: " in result.output


def test_a_bad_cell_in_a_middle_parquet_batch_is_named(tmp_path: Path, shares: list[int]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "h.parquet"
    write_history(HistoryGenerator(60_000, keys=30, processes=5, seed=3), path)
    table = pq.read_table(path)
    values = table.column("value").to_pylist()
    values[110_000] = "[1"  # row 110,001: the second batch of 100,000
    table = table.set_column(table.schema.get_field_index("value"), "value", pa.array(values, pa.string()))
    pq.write_table(table, path)
    got = check_file(str(path), ALL, workers=2)
    assert got.valid is None and got.errors == check_file(str(path), ALL, workers=1).errors
    assert got.errors[0].startswith(f"{path}:110001: ")
    assert shares == [False]  # the shares gave up, and the one-process path named the row


def test_a_model_error_is_reported_as_on_one_process(tmp_path: Path, shares: list[int]) -> None:
    path = tmp_path / "h.jsonl"
    write_history(HistoryGenerator(500, keys=4, processes=3, seed=1), path)
    got = check_file(str(path), FileOptions(model="kv"), workers=2)
    assert got.valid is None and "kv has no function" in got.errors[0]


def test_small_files_stay_in_one_process(tmp_path: Path) -> None:
    path = tmp_path / "h.parquet"
    write_history(HistoryGenerator(500, keys=4, processes=3, seed=1), path)
    assert not sharded.big_enough(str(path), "parquet")
    assert sharded.big_enough(str(path), "edn") is False
    assert json.loads(json.dumps(check_file(str(path), ALL).summary))["valid"] is True
