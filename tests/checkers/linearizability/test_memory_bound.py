"""The memory bound: sizes parse or fail in one line, a search past the bound stops and its partition
is unknown with the reason, the other partitions are still checked, and a MemoryError is the same."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from checkers.gen_history import HistoryGenerator
from checkers.linearizability import checker
from checkers.linearizability.checker import PartitionCheck, check_calls
from checkers.linearizability.memory import format_size, parse_size, rss_bytes, share
from checkers.linearizability.search import Search
from checkers.models import make_model
from harness.cli.main import main
from harness.history.jsonl import write_jsonl
from harness.history.pairing import pair_calls

HARD = dict(keys=1, processes=40, seed=2, info_rate=0.2)
"""A generated single-key history the search needs millions of steps for."""


def test_sizes() -> None:
    assert parse_size("1G") == parse_size("1GiB") == parse_size("1 gb") == 1 << 30
    assert parse_size("512M") == 512 << 20 and parse_size("1.5G") == 3 << 29
    assert parse_size("2000000000") == 2_000_000_000
    for bad in ("", "G", "1Q", "-1G", "1e9", "1,5G"):
        with pytest.raises(ValueError, match="is not a size"):
            parse_size(bad)
    with pytest.raises(ValueError, match="too small"):
        parse_size("1M")
    assert format_size(1 << 30) == "1.0 GiB" and format_size(1536 << 20) == "1.5 GiB"
    assert share(None, 4) is None and share(8 << 30, 4) == 2 << 30


def test_a_search_past_the_bound_stops_and_is_unknown_with_the_reason() -> None:
    calls = pair_calls(list(HistoryGenerator(300, **HARD)))  # type: ignore[arg-type]
    check = PartitionCheck(make_model("cas-register").partition(calls)[0])
    assert check.advance(None, None, max_rss=rss_bytes() - 1) == "unknown"
    assert check.verdict.reason is not None and check.verdict.reason.startswith("memory:")
    assert "--max-memory" in check.verdict.reason and check.search is None
    assert 0 < check.verdict.nodes <= 4096  # looked at every 4096 steps


def test_the_other_partitions_are_still_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    # One hard key among easy ones: only the hard key's search outgrows the bound.
    calls = pair_calls(list(HistoryGenerator(300, **HARD)))  # type: ignore[arg-type]
    easy = pair_calls(list(HistoryGenerator(200, keys=5, processes=3, seed=3)))
    for k, c in enumerate(easy):
        c.key = f"easy{c.key}"
        c.id = len(calls) + k
    real = Search.run

    def grow(self: Search, max_nodes: int | None = None, deadline: float | None = None,
             max_rss: int | None = None) -> bool | None:
        # The hard key's search sees a bound below what the process holds; the others none.
        return real(self, max_nodes, deadline, 1 if len(self.inputs) > 250 else None)

    monkeypatch.setattr(Search, "run", grow)
    result = check_calls(calls + easy, make_model("cas-register"), max_memory=1 << 40, workers=1)
    assert result.valid == "unknown" and result.unknown_keys == [0]
    assert result.unknown_reasons[0].startswith("memory:")
    assert result.checked == result.partitions == 6


def test_a_memory_error_is_unknown_not_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args: object, **kwargs: object) -> None:
        raise MemoryError

    monkeypatch.setattr(Search, "run", boom)
    calls = pair_calls(list(HistoryGenerator(100, keys=1, processes=5, seed=1)))
    verdict = checker.check_partition(make_model("cas-register").partition(calls)[0])
    assert verdict.valid == "unknown" and verdict.reason is not None and "MemoryError" in verdict.reason


def test_cli_bad_size_is_one_line_exit_3(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    write_jsonl(HistoryGenerator(10, keys=1, processes=2, seed=1), path)
    with pytest.raises(SystemExit) as e:
        main(["check", "--max-memory", "lots", str(path)])
    _, err = capsys.readouterr()
    assert e.value.code == 3 and err.count("\n") == 1 and "--max-memory" in err and "Traceback" not in err


def test_cli_bound_gives_unknown_with_reason(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    write_jsonl(HistoryGenerator(300, **HARD), path)  # type: ignore[arg-type]
    with pytest.raises(SystemExit) as e:
        main(["check", "--model", "cas-register", "--max-memory", "16M", "--json", str(path)])
    out, _ = capsys.readouterr()
    lines = [json.loads(line) for line in out.splitlines()]
    assert e.value.code == 2
    assert lines[0]["event"] == "partition" and lines[0]["valid"] == "unknown"
    assert lines[0]["reason"].startswith("memory:")
    assert lines[-1]["event"] == "file" and lines[-1]["unknown_reasons"][0].startswith("memory:")
