"""Every non-empty Porcupine history gets the verdict Porcupine's own test suite asserts."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from checkers.linearizability.explain import explain
from checkers.linearizability.html import render_html
from checkers.linearizability.run import FileOptions, check_file

DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "porcupine"


def _rows() -> list[dict[str, str]]:
    if not (DATA / "expected.tsv").exists():
        return []
    with open(DATA / "expected.tsv", encoding="utf-8") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


ROWS = _rows()
EXPECTED = {"linearizable": True, "not-linearizable": False}

pytestmark = pytest.mark.skipif(not ROWS, reason="Porcupine test data not found")


@pytest.mark.parametrize("row", [r for r in ROWS if r["expected"] != "empty"], ids=lambda r: r["path"])
def test_expected_verdict(row: dict[str, str]) -> None:
    report = check_file(str(DATA / row["path"]), FileOptions())
    assert report.errors == []
    assert report.summary["ops"] == int(row["operations"])
    assert report.valid is EXPECTED[row["expected"]]
    if report.valid is False:
        assert report.summary["invalid_keys"]
        cex = report.counterexamples[0]
        assert cex.stuck, "an invalid partition names the ops that could not come next"
        assert "Not linearizable" in explain(cex)


def test_all_108_non_empty_files_are_covered() -> None:
    assert len([r for r in ROWS if r["expected"] != "empty"]) == 108


def test_empty_history_is_valid() -> None:
    report = check_file(str(DATA / "jepsen" / "etcd_095.log"), FileOptions())
    assert report.valid is True and report.summary["ops"] == 0


def test_kv_without_partition_agrees() -> None:
    for name, want in (("c10-ok.txt", True), ("c10-bad.txt", False)):
        report = check_file(str(DATA / "kv" / name), FileOptions(partition=False))
        assert report.valid is want
        assert report.summary["partitions"] == 1


def test_html_is_self_contained() -> None:
    report = check_file(str(DATA / "jepsen" / "etcd_000.log"), FileOptions())
    page = render_html("etcd_000", report.counterexamples, {"valid": False})
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page and "stuck" in page
    assert "http://" not in page and "https://" not in page and "src=" not in page
