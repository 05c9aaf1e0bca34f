"""Cost in advance and events while checking: the shape of a partition, the estimate's direction, the
plan line, --json's per-partition lines (before the file's line), --plan, the progress bar, and the
CLI's witness files, --explain and --html showing the witness first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from checkers.gen_history import HistoryGenerator
from checkers.linearizability.estimate import FilePlan, estimate_steps, measure, plan, shape
from checkers.linearizability.progress import ConsoleEvents
from checkers.linearizability.run import FileOptions, check_files
from checkers.models import make_model
from checkers.models.base import Partition
from harness.cli.main import main
from harness.history.jsonl import write_jsonl
from harness.history.op import Op, OpType
from harness.history.pairing import pair_calls

DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "porcupine"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as e:
        main(["check", *args])
    out, err = capsys.readouterr()
    return int(e.value.code or 0), out, err


def test_measure_counts_ops_concurrency_and_info() -> None:
    ops = [Op(0, 0, 0, OpType.INVOKE, "write", None, 1), Op(1, 1, 1, OpType.INVOKE, "write", None, 2),
           Op(2, 2, 2, OpType.INVOKE, "write", None, 3), Op(3, 3, 0, OpType.OK, "write", None, 1),
           Op(4, 4, 1, OpType.INFO, "write", None, 2), Op(5, 5, 2, OpType.FAIL, "write", None, 3),
           Op(6, 6, 0, OpType.INVOKE, "read"), Op(7, 7, 0, OpType.OK, "read", None, 1)]
    assert measure(pair_calls(ops)) == (3, 1, 1)  # the fail op aside; the info op counted apart


def test_the_estimate_grows_with_concurrency_info_and_length() -> None:
    assert estimate_steps(100, 20, 0) > estimate_steps(100, 5, 0)
    assert estimate_steps(100, 5, 30) > estimate_steps(100, 5, 0)
    assert estimate_steps(1000, 5, 0) > estimate_steps(100, 5, 0)
    assert estimate_steps(0, 5, 0) == 0


def test_a_split_partition_is_estimated_key_by_key() -> None:
    calls = pair_calls(list(HistoryGenerator(2000, keys=20, processes=40, seed=1)))
    whole = Partition(None, make_model("register"), calls)
    split, raw = shape(whole, split=True), shape(whole, split=False)
    assert split.keys == 20 and raw.keys == 1 and split.ops == raw.ops
    assert split.concurrency < raw.concurrency and split.steps < raw.steps


def test_plan_line_names_the_figures() -> None:
    calls = pair_calls(list(HistoryGenerator(300, keys=3, processes=6, seed=2, info_rate=0.1)))
    p = plan(make_model("register").partition(calls))
    line = p.line("h.jsonl")
    assert p.partitions == 3 and f"largest concurrency {p.concurrency}" in line
    assert f"max {p.info_max}" in line and p.difficulty in line and "hardest key" in line
    assert FilePlan(1, 50, 0, 0, 300.0).difficulty == "hard" and FilePlan(1, 2, 0, 0, 0.1).difficulty == "easy"


@pytest.mark.skipif(not DATA.exists(), reason="Porcupine test data not found")
def test_json_streams_each_partition_before_the_file_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--json", "--all-violations", str(DATA / "kv" / "c10-bad.txt"))
    lines = [json.loads(line) for line in out.splitlines()]
    parts, last = lines[:-1], lines[-1]
    assert code == 1 and last["event"] == "file" and len(parts) == last["partitions"] == 10
    assert all(p["event"] == "partition" and p["path"] == last["path"] for p in parts)
    assert sorted(p["key"] for p in parts if p["valid"] is False) == sorted(last["invalid_keys"])


def test_events_from_forked_workers_reach_the_parent(tmp_path: Path) -> None:
    paths = []
    for seed in range(3):
        path = tmp_path / f"h{seed}.jsonl"
        write_jsonl(HistoryGenerator(3000, keys=4, processes=4, seed=seed), path)
        paths.append(str(path))
    got: list[tuple[str, str, object]] = []

    class Record:
        def planned(self, path: str, p: FilePlan) -> None:
            got.append(("planned", path, p.partitions))

        def decided(self, path: str, partition: dict[str, object]) -> None:
            got.append(("decided", path, partition["key"]))

    reports = list(check_files(paths, FileOptions(model="register"), jobs=2, events=Record()))
    assert all(r.valid is True for r in reports)
    for name in paths:
        mine = [g for g in got if g[1] == name]
        assert mine[0] == ("planned", name, 4) and sorted(k for _, _, k in mine[1:]) == [0, 1, 2, 3]  # type: ignore[type-var]


def test_plan_flag_and_progress_bar(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    write_jsonl(HistoryGenerator(500, keys=3, processes=4, seed=1), path)
    code, _, err = run(capsys, "--plan", "--progress", str(path))
    assert code == 0 and f"fencepost: plan: {path}: 3 partitions" in err
    events = ConsoleEvents(progress=True)
    events.planned("x", FilePlan(2, 1, 0, 0, 0.2, estimates={"a": 0.1, "b": 0.1}))
    events.decided("x", {"key": "a", "valid": True})
    events.decided("x", {"key": "b", "valid": "unknown"})
    assert events.counts == {"decided": 2, "valid": 1, "invalid": 0, "unknown": 1}
    events.close()


def test_cli_witness_files_explain_and_html(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    ops = [Op(0, 0, 0, OpType.INVOKE, "write", None, 1), Op(1, 1, 0, OpType.OK, "write", None, 1),
           Op(2, 2, 1, OpType.INVOKE, "write", None, 2), Op(3, 3, 1, OpType.OK, "write", None, 2),
           Op(4, 4, 0, OpType.INVOKE, "read"), Op(5, 5, 0, OpType.OK, "read", None, 1),
           Op(6, 6, 2, OpType.INVOKE, "read"), Op(7, 7, 2, OpType.OK, "read", None, 2)]
    path = tmp_path / "bad.jsonl"
    write_jsonl(ops, path)
    out_dir = tmp_path / "w"
    code, out, _ = run(capsys, "--witness", str(out_dir), "--explain", "--html", str(tmp_path / "html"), str(path))
    assert code == 1
    assert out.index("Minimal witness") < out.index("Not linearizable")
    witness = out_dir / "bad.jsonl.history.witness.jsonl"
    assert f"witness: {witness}" in out
    written = [json.loads(line) for line in witness.read_text().splitlines()]
    assert {w["source"] for w in written} <= {f"{path}:{n}" for n in range(1, 9)}
    assert len(written) < len(ops)
    assert run(capsys, "--model", "register", str(witness))[0] == 1
    page = (tmp_path / "html" / "bad.jsonl.html").read_text()
    assert page.index("Minimal witness") < page.index("Counterexample")
