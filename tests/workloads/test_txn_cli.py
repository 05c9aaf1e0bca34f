"""Issue 51's "done when", through the command line: ``fencepost test --workload list-append`` on the fake
transactional store is valid in its serializable mode, and in its snapshot-isolation mode invalid as
(strict-)serializable and valid as snapshot isolation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli.main import cli

BASE = ["test", "--system", "fake", "--backend", "memory", "--nemesis", "none", "--time-limit", "1", "--seed", "1"]


def results_of(store: Path, name: str) -> tuple[dict[str, object], Path]:
    run = max((store / name).glob("2*"))  # run folders are named by start time
    return json.loads((run / "results.json").read_text()), run


@pytest.mark.slow  # two whole runs through the CLI, each rendering its report; the first recovers for 5 s
def test_the_serializable_fake_is_valid_and_snapshot_isolation_is_caught_as_write_skew(tmp_path: Path) -> None:
    clean = CliRunner().invoke(cli, [*BASE, "--workload", "list-append", "--rate", "0", "--store", str(tmp_path)])
    assert clean.exit_code == 0, clean.output
    assert "VALID  fake-list-append-none" in clean.stdout
    results, _ = results_of(tmp_path, "fake-list-append-none")
    txn = results["checkers"]["txn"]  # type: ignore[index]
    assert txn["valid"] is True and txn["consistency"] == ["strict-serializable"] and txn["ok"] > 100, txn
    assert txn["fail"] > 0  # the defaults contend: the serializable store refused some commits

    # the bug's recipe: list-append, no faults, ten workers back to back
    buggy = CliRunner().invoke(cli, ["test", "--system", "fake", "--backend", "memory", "--bug", "snapshot-isolation",
                                     "--time-limit", "1", "--seed", "1", "--store", str(tmp_path)])
    assert buggy.exit_code == 1, buggy.output
    assert "INVALID  fake-list-append-none-bug-snapshot-isolation" in buggy.stdout
    assert "txn: INVALID" in buggy.stdout
    results, run = results_of(tmp_path, "fake-list-append-none-bug-snapshot-isolation")
    txn = results["checkers"]["txn"]  # type: ignore[index]
    assert "G2-item" in txn["prohibited"], txn["anomaly_types"]
    assert "serializable" in [*txn["not"], *txn["also_not"]] and "snapshot-isolation" not in txn["also_not"]
    assert not {"G0", "G1a", "G1b", "G1c", "G-single", "lost-update", "internal"} & set(txn["anomaly_types"])

    as_si = CliRunner().invoke(cli, ["check", "--model", "list-append", "--consistency", "snapshot-isolation",
                                     str(run / "history.jsonl")])
    assert as_si.exit_code == 0, as_si.output
    as_serializable = CliRunner().invoke(cli, ["check", "--model", "list-append", "--consistency", "serializable",
                                               str(run / "history.jsonl")])
    assert as_serializable.exit_code == 1, as_serializable.output
