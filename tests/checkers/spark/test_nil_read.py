"""The Spark engine checks each file by the same rules as the local engine: the format's nil-read rule
(Knossos's ``any`` for Jepsen EDN, ``absent`` otherwise) and ``--nil-read`` overriding it. Every history in
examples/histories/ gets the same verdict from both engines, under each rule."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from checkers.linearizability.run import FileOptions, check_file
from checkers.spark.engine import check_file_spark
from harness.cli.main import cli
from harness.history.jsonl import write_jsonl
from harness.history.op import Op, OpType
from tests.checkers.test_check_jepsen import BACKWARDS

pytestmark = pytest.mark.spark

REPO = Path(__file__).resolve().parents[3]
HISTORIES = sorted(p for p in (REPO / "examples" / "histories").iterdir() if p.name != "README.md")
NIL_READ = REPO / "examples" / "histories" / "jepsen-nil-read.valid.edn"


def _verdicts(path: Path, opts: FileOptions, spark: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The same figures from the local engine and from Spark, for one file."""
    out = []
    for report in (check_file(str(path), opts, workers=1), check_file_spark(str(path), opts, spark=spark)):
        assert not report.errors, report.errors
        s = report.summary
        out.append({"valid": report.valid, "model": s["model"], "format": s["format"], "ops": s["ops"],
                    "semantics": s.get("semantics"), "invalid_keys": sorted(map(repr, s["invalid_keys"]))})
    return out[0], out[1]


def test_every_example_history_gets_the_local_verdict_on_spark(spark: Any) -> None:
    disagree = {}
    for nil_read in (None, "any", "absent"):
        opts = FileOptions(all_violations=True, nil_read=nil_read)
        for path in HISTORIES:
            local, on_spark = _verdicts(path, opts, spark)
            if local != on_spark:
                disagree[f"{path.name} nil_read={nil_read}"] = (local, on_spark)
            if nil_read is None:  # the defaults give the verdict in the file's name
                assert local["valid"] is (path.name.split(".")[-2] == "valid"), path.name
    assert not disagree


def test_a_jepsen_nil_read_constrains_nothing_on_spark_unless_told_otherwise(spark: Any) -> None:
    default = check_file_spark(str(NIL_READ), FileOptions(), spark=spark)
    assert default.valid is True
    assert default.summary["semantics"] == {"name": "knossos", "nil_read": "any", "time": "advisory",
                                            "order": "position"}
    absent = check_file_spark(str(NIL_READ), FileOptions(nil_read="absent"), spark=spark)
    assert absent.valid is False and absent.summary["semantics"]["nil_read"] == "absent"


def test_nil_read_any_reaches_spark_for_a_native_history(spark: Any, tmp_path: Path) -> None:
    ops = [Op(0, 1, 0, OpType.INVOKE, "write", "x", 1), Op(1, 2, 0, OpType.OK, "write", "x", 1),
           Op(2, 3, 1, OpType.INVOKE, "read", "x", None), Op(3, 4, 1, OpType.OK, "read", "x", None)]
    path = tmp_path / "nil-after-write.jsonl"
    write_jsonl(ops, path)
    assert check_file_spark(str(path), FileOptions(), spark=spark).valid is False  # absent: nil is no value
    assert check_file_spark(str(path), FileOptions(nil_read="any"), spark=spark).valid is True


def test_fencepost_check_on_spark_takes_nil_read(spark: Any) -> None:
    """``fencepost check --engine spark`` uses the engine's session (the one the fixture started)."""
    got = {}
    for extra in ([], ["--nil-read", "absent"]):
        result = CliRunner().invoke(cli, ["check", str(NIL_READ), "--engine", "spark", "--json", *extra])
        line = [json.loads(x) for x in result.output.splitlines() if x.startswith("{")][-1]
        assert line["engine"] == "spark", result.output
        got[" ".join(extra)] = (result.exit_code, line["valid"], line["semantics"]["nil_read"])
    assert got == {"": (0, True, "any"), "--nil-read absent": (1, False, "absent")}



def test_spark_keeps_the_historys_warnings_as_the_local_engine_does(spark: Any, tmp_path: Path) -> None:
    path = tmp_path / "time.edn"
    path.write_text(BACKWARDS)
    local = check_file(str(path), FileOptions(), workers=1)
    on_spark = check_file_spark(str(path), FileOptions(), spark=spark)
    assert local.summary["warnings"] and "time goes backwards" in local.summary["warnings"][0]
    assert on_spark.valid is local.valid is True
    assert on_spark.summary["warnings"] == local.summary["warnings"]
