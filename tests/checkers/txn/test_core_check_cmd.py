"""``fencepost check --model list-append|rw-register``: routing, exit codes 0/1/2/3, --json, --explain and
--witness (each witness fails again on its own), and the linearizability path left as it was."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from checkers.txn import check_txn
from checkers.txn.witness import write_witness
from harness.cli.main import main
from harness.history.formats import load_history
from harness.history.jsonl import write_jsonl
from harness.history.op import Op
from tests.checkers.txn import test_core_list_append as la
from tests.checkers.txn import test_core_rw_register as rw
from tests.checkers.txn.core_history import overlapping, sequential, txn


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as e:
        main(["check", *args])
    out, err = capsys.readouterr()
    return int(e.value.code or 0), out, err


def save(tmp_path: Path, name: str, ops: list[Op]) -> str:
    for op in ops:
        op.extra.pop("line", None)
    path = tmp_path / name
    write_jsonl(ops, path)
    return str(path)


def test_exit_codes_and_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = save(tmp_path, "good.jsonl", overlapping(txn(0, [["append", 1, 1]]), txn(1, [["r", 1, [1]]])))
    skew = save(tmp_path, "skew.jsonl", la.CASES["G2-item"][0]())
    code, out, _ = run(capsys, "--model", "list-append", good)
    assert code == 0 and out.startswith(f"{good}: valid (list-append, strict-serializable, 2 txns")
    code, out, _ = run(capsys, "--model", "list-append", "--consistency", "snapshot-isolation", skew)
    assert code == 0 and "also seen: G2-item" in out
    code, out, _ = run(capsys, "--model", "list-append", "--consistency", "snapshot-isolation,serializable", skew)
    assert code == 1 and "INVALID" in out and "G2-item (1)" in out
    code, out, _ = run(capsys, "--model", "list-append", "--consistency", "serializable", good, skew)
    assert code == 1 and len(out.splitlines()) == 2
    unknown = save(tmp_path, "none.jsonl", overlapping(txn(0, [["append", 1, 1]], "fail")))
    code, out, _ = run(capsys, "--model", "list-append", unknown)
    assert code == 2 and "unknown" in out


def test_a_malformed_micro_op_is_one_line_with_file_and_line(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    bad = save(tmp_path, "bad.jsonl", overlapping(txn(0, [["append", 1, 1]]), txn(1, [["r", 1, [1]], ["x", 1, 2]])))
    code, out, err = run(capsys, "--model", "list-append", bad)
    assert code == 3 and out == ""
    assert err.splitlines() == [f"fencepost: error: {bad}:4: micro-op 1 ['x' 1 2]: list-append micro-ops are "
                                "append and r"]


def test_usage_errors_exit_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = save(tmp_path, "good.jsonl", overlapping(txn(0, [["append", 1, 1]])))
    code, _, err = run(capsys, "--model", "list-append", "--consistency", "read-skew", good)
    assert code == 3 and "unknown consistency model 'read-skew'" in err
    code, _, err = run(capsys, "--consistency", "serializable", good)
    assert code == 3 and "--consistency applies to --model list-append or rw-register" in err
    code, _, err = run(capsys, "--model", "rw-register", str(tmp_path / "missing.jsonl"))
    assert code == 3 and "no such file" in err


def test_json_and_explain(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = save(tmp_path, "single.jsonl", la.CASES["G-single"][0]())
    code, out, _ = run(capsys, "--model", "list-append", "--json", path)
    doc = json.loads(out)
    assert code == 1 and doc["event"] == "file" and doc["path"] == path and doc["prohibited"] == ["G-single"]
    assert doc["anomalies"]["G-single"][0]["txns"][0]["lines"][0] in (1, 2)
    code, out, _ = run(capsys, "--model", "list-append", "--explain", path)
    assert "so T1 rw→ T0" in out and f"{path}:1, 4" in out and "rules out: consistent-view" in out


def test_the_linearizability_path_is_unchanged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from harness.history.op import OpType

    path = tmp_path / "reg.jsonl"
    write_jsonl([Op(0, 0, 0, OpType.INVOKE, "write", None, 1), Op(1, 1, 0, OpType.OK, "write", None, 1),
                 Op(2, 2, 1, OpType.INVOKE, "read", None, None), Op(3, 3, 1, OpType.OK, "read", None, 2)], path)
    code, out, _ = run(capsys, "--model", "register", str(path))
    assert code == 1 and "INVALID (model register" in out


WITNESSED: list[tuple[str, Any, str, str]] = [
    ("list-append", la.CASES["G-single"][0], "G-single", "serializable"),
    ("list-append", la.CASES["G-nonadjacent"][0], "G-nonadjacent", "serializable"),
    ("list-append", la.CASES["G1a"][0], "G1a", "strict-serializable"),
    ("list-append", la._stale, "G-single-realtime", "strict-serializable"),
    ("list-append", la.CASES["incompatible-order"][0], "incompatible-order", "serializable"),
    ("rw-register", rw.CASES["G0"][0], "G0", "serializable"),
    ("rw-register", lambda: sequential(txn(0, [["w", 1, 1]]), txn(1, [["w", 1, 2]]), txn(2, [["r", 1, 1]])),
     "G-single-realtime", "strict-serializable"),
]


@pytest.mark.parametrize(("workload", "make", "kind", "model"), WITNESSED)
def test_each_witness_fails_again_on_its_own(tmp_path: Path, workload: str, make: Any, kind: str,
                                             model: str) -> None:
    noise = [txn(50 + i, [[("append" if workload == "list-append" else "w"), 90 + i, 1]], start=0.5, end=200)
             for i in range(5)]
    ops = make()
    ops += [o for o in overlapping(*noise) if o.index >= 0]
    ops.sort(key=lambda o: (o.time, o.index))
    for i, o in enumerate(ops):
        o.index = i
    result = check_txn(ops, workload, [model])
    assert kind in result["anomaly_types"]
    files = write_witness(result, ops, tmp_path, "h.jsonl")
    mine = [f for f in files if f".{kind}." in f.name]
    assert mine
    again = check_txn(load_history(mine[0]), workload, [model])
    assert kind in again["anomaly_types"] and again["valid"] is False
    assert again["txns"] < result["txns"]  # the noise is gone


def test_witness_dir_from_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = save(tmp_path, "g0.jsonl", la.CASES["G0"][0]())
    code, out, _ = run(capsys, "--model", "list-append", "--witness", str(tmp_path / "w"), path)
    assert code == 1 and "witness:" in out
    written = sorted((tmp_path / "w").iterdir())
    assert [p.name for p in written] == ["g0.jsonl.G0.0.witness.jsonl"]
    code, out, _ = run(capsys, "--model", "list-append", str(written[0]))
    assert code == 1 and "G0 (1)" in out


def test_the_three_input_formats_give_the_same_verdict(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import orjson

    from harness.history.formats import write_history

    ops = la.CASES["G-single"][0]()
    jsonl = save(tmp_path, "h.jsonl", ops)
    write_history(load_history(jsonl), tmp_path / "h.edn")
    (tmp_path / "h.json").write_bytes(orjson.dumps([o.to_dict() for o in load_history(jsonl)],
                                                   option=orjson.OPT_INDENT_2))
    docs = []
    for name in ("h.jsonl", "h.edn", "h.json"):
        code, out, _ = run(capsys, "--model", "list-append", "--json", str(tmp_path / name))
        doc = json.loads(out)
        docs.append((code, doc["prohibited"], [[t["id"] for t in e["txns"]] for e in doc["anomalies"]["G-single"]]))
        assert all(t["lines"][0] for e in doc["anomalies"]["G-single"] for t in e["txns"])  # lines known
    assert docs[0] == docs[1] == docs[2] == (1, ["G-single"], docs[0][2])


def test_html_pages_for_invalid_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from harness import registry

    if not registry.group("fencepost.txn_pages"):
        pytest.skip("no fencepost.txn_pages writer installed")
    path = save(tmp_path, "g0.jsonl", la.CASES["G0"][0]())
    code, out, _ = run(capsys, "--model", "list-append", "--html", str(tmp_path / "pages"), path)
    assert "html:" in out
    assert code == 1 and (tmp_path / "pages" / "g0.jsonl.html").stat().st_size > 0
