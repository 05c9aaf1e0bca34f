"""Jepsen-format histories get Knossos's verdicts, with the initial values Knossos's tests use."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from checkers.linearizability.explain import explain
from checkers.linearizability.html import render_html
from checkers.linearizability.run import FileOptions, check_file
from harness.history.edn_values import parse_value
from tests.checkers.linearizability.jepsen_histories import simulate

HERE = Path(__file__).resolve().parent / "jepsen_histories"
with open(HERE / "expected.tsv", encoding="utf-8") as fh:
    ROWS = list(csv.DictReader(fh, delimiter="\t"))


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r['path']}-{r['init'] or 'default'}")
def test_knossos_verdict(row: dict[str, str]) -> None:
    init = parse_value(row["init"]) if row["init"] else None
    report = check_file(str(HERE / row["path"]), FileOptions(init=init, all_violations=True))
    assert report.errors == []
    s = report.summary
    assert s["format"] == "edn" and s["model"] == row["model"]
    assert s["semantics"] == {"name": "knossos", "nil_read": "any", "time": "advisory", "order": "position"}
    assert report.valid is (row["expected"] == "linearizable")
    if row["invalid_keys"]:
        assert s["invalid_keys"] == [int(k) for k in row["invalid_keys"].split(",")]
    if report.valid is False:
        cex = report.counterexamples[0]
        assert cex.stuck and "Not linearizable" in explain(cex)


def test_every_fixture_has_a_verdict() -> None:
    assert {r["path"] for r in ROWS} == {p.name for p in HERE.glob("*.edn")}


@pytest.mark.parametrize("name", sorted(simulate.FIXTURES))
def test_fixtures_are_what_the_simulation_makes(name: str) -> None:
    assert (HERE / name).read_text() == simulate.render(name)


def test_nil_reads_are_an_anomaly_only_when_nil_means_absent() -> None:
    path = str(HERE / "cas-register-nil-reads-valid.edn")
    assert check_file(path, FileOptions(init=0)).valid is True
    strict = check_file(path, FileOptions(init=0, nil_read="absent"))
    assert strict.valid is False and strict.summary["semantics"]["nil_read"] == "absent"


def test_time_going_backwards_is_a_warning_with_the_first_line() -> None:
    path = HERE / "cas-register-independent-valid.edn"
    report = check_file(str(path), FileOptions())
    lines = path.read_text().splitlines()
    times = [int(line.split(":time ")[1].split(",")[0]) for line in lines]
    first = next(i for i in range(1, len(times)) if times[i] < times[i - 1])
    steps = sum(times[i] < times[i - 1] for i in range(1, len(times)))
    assert report.valid is True
    assert report.summary["warnings"] == [
        f"{path}:{first + 1}: time goes backwards here ({times[first]} after {times[first - 1]}) and at {steps} "
        "ops in all; ops are ordered by position, as Jepsen does"]


def test_multi_register_and_mutex_counterexamples_read_well() -> None:
    mr = check_file(str(HERE / "multi-register-valid.edn"), FileOptions(init=parse_value("{:x 1 :y 0}")))
    text = explain(mr.counterexamples[0])
    assert "starting from {:x 1, :y 0}" in text and "txn [read :x -> 0]" in text
    assert "illegal in state {:x 1, :y 0}" in text
    page = render_html("mr", mr.counterexamples)
    assert "txn [read :x -&gt; 0]" in page and "{:x 1, :y 0}" in page
    mx = check_file(str(HERE / "mutex-double-grant-invalid.edn"), FileOptions())
    text = explain(mx.counterexamples[0])
    assert "model mutex" in text and "acquire" in text and "illegal in state held" in text
    assert "illegal in state held" in render_html("mx", mx.counterexamples)
