"""``fencepost check`` on Jepsen's EDN and run folders: each rule of Knossos's semantics, end to end."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.cli.main import main
from harness.history.jsonl import write_jsonl
from harness.history.op import Op, OpType

FIXTURES = Path(__file__).resolve().parent / "linearizability" / "jepsen_histories"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Exit code, stdout without ``--json``'s per-partition lines (one object per file is left), stderr."""
    with pytest.raises(SystemExit) as e:
        main(["check", *args])
    out, err = capsys.readouterr()
    out = "".join(line for line in out.splitlines(keepends=True) if not line.startswith('{"event": "partition"'))
    return int(e.value.code or 0), out, err


def edn(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


# A cas-register from 0: process 1's read came back :ok with nil (the client learned nothing).
NIL_READ = """\
{:type :invoke, :f :write, :value 1, :process 0, :time 1000, :index 0}
{:type :ok, :f :write, :value 1, :process 0, :time 2000, :index 1}
{:type :invoke, :f :read, :value nil, :process 1, :time 3000, :index 2}
{:type :ok, :f :read, :value nil, :process 1, :time 4000, :index 3}
{:type :invoke, :f :cas, :value [1 2], :process 0, :time 5000, :index 4}
{:type :ok, :f :cas, :value [1 2], :process 0, :time 6000, :index 5}
"""


def test_a_nil_read_is_valid_only_under_knossos_semantics(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = edn(tmp_path, "nil.edn", NIL_READ)
    code, out, _ = run(capsys, "--json", "--init", "0", path)
    assert code == 0
    assert json.loads(out)["semantics"] == {"name": "knossos", "nil_read": "any", "time": "advisory",
                                            "order": "position"}
    code, out, _ = run(capsys, "--json", "--init", "0", "--nil-read", "absent", path)
    assert code == 1 and json.loads(out)["semantics"]["nil_read"] == "absent"


def test_native_jsonl_keeps_null_as_a_value(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    write_jsonl([Op(0, 0, 0, OpType.INVOKE, "read"), Op(1, 1, 0, OpType.OK, "read", value=None)], path)
    code, out, _ = run(capsys, "--json", "--init", "0", str(path))
    assert code == 1 and json.loads(out)["semantics"]["name"] == "fencepost"
    assert run(capsys, "--init", "0", "--nil-read", "any", str(path))[0] == 0


# :time goes backwards twice (lines 3 and 5), as Jepsen's interpreter can journal it.
BACKWARDS = """\
[{:index 0, :time 100, :type :invoke, :process 0, :f :write, :value 1}
 {:index 1, :time 180, :type :invoke, :process 1, :f :read, :value nil}
 {:index 2, :time 150, :type :ok, :process 0, :f :write, :value 1}
 {:index 3, :time 300, :type :ok, :process 1, :f :read, :value 1}
 {:index 4, :time 250, :type :info, :process :nemesis, :f :kill, :value :all}]
"""


def test_backwards_time_is_a_warning(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = edn(tmp_path, "time.edn", BACKWARDS)
    code, out, err = run(capsys, path)
    assert code == 0 and "valid" in out
    warning = (f"fencepost: warning: {path}:3: time goes backwards here (150 after 180) and at 2 ops in all; "
               "ops are ordered by position, as Jepsen does")
    assert err.strip() == warning
    code, out, _ = run(capsys, "--json", path)
    assert code == 0 and json.loads(out)["warnings"] == [warning.removeprefix("fencepost: warning: ")]


# The first transaction reads :x as 0 and completes before anything else is invoked.
MULTI = """\
{:index 0, :time 10, :type :invoke, :process 0, :f :txn, :value [[:read :x nil] [:read :y nil]]}
{:index 1, :time 20, :type :ok, :process 0, :f :txn, :value [[:read :x 0] [:read :y 0]]}
{:index 2, :time 30, :type :invoke, :process 1, :f :txn, :value [[:write :x 2] [:read :y nil]]}
{:index 3, :time 40, :type :invoke, :process 0, :f :txn, :value [[:read :x nil] [:write :y 3]]}
{:index 4, :time 50, :type :ok, :process 1, :f :txn, :value [[:write :x 2] [:read :y 0]]}
{:index 5, :time 60, :type :ok, :process 0, :f :txn, :value [[:read :x 2] [:write :y 3]]}
{:index 6, :time 70, :type :invoke, :process 1, :f :txn, :value [[:read :y nil]]}
{:index 7, :time 80, :type :info, :process 1, :f :txn, :value [[:read :y nil]], :error :timeout}
"""


def test_multi_register_from_its_initial_map(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = edn(tmp_path, "multi.edn", MULTI)
    code, out, _ = run(capsys, "--json", "--init", "{:x 0 :y 0}", path)
    assert code == 0 and json.loads(out)["model"] == "multi-register"
    assert run(capsys, "--init", '{"x": 0, "y": 0}', path)[0] == 0
    code, out, _ = run(capsys, "--explain", "--init", "{:x 1 :y 0}", path)
    assert code == 1 and "illegal in state {:x 1, :y 0}" in out and "txn [read :x -> 0, read :y -> 0]" in out
    code, _, err = run(capsys, "--init", "[0 0]", path)
    assert code == 3 and "initial value is a map" in err and "Traceback" not in err


MUTEX_BAD = """\
{:type :invoke, :f :acquire, :value nil, :process 0, :time 1, :index 0}
{:type :ok, :f :acquire, :value nil, :process 0, :time 2, :index 1}
{:type :invoke, :f :acquire, :value nil, :process 1, :time 3, :index 2}
{:type :ok, :f :acquire, :value nil, :process 1, :time 4, :index 3}
{:type :invoke, :f :release, :value nil, :process 2, :time 5, :index 4}
{:type :fail, :f :release, :value nil, :process 2, :time 6, :index 5, :error :not-held}
{:type :invoke, :f :release, :value nil, :process 0, :time 7, :index 6}
{:type :ok, :f :release, :value nil, :process 0, :time 8, :index 7}
"""
# The fixed twin: process 0 releases before process 1 acquires.
MUTEX_FIXED = """\
{:type :invoke, :f :acquire, :value nil, :process 0, :time 1, :index 0}
{:type :ok, :f :acquire, :value nil, :process 0, :time 2, :index 1}
{:type :invoke, :f :release, :value nil, :process 2, :time 3, :index 2}
{:type :fail, :f :release, :value nil, :process 2, :time 4, :index 3, :error :not-held}
{:type :invoke, :f :release, :value nil, :process 0, :time 5, :index 4}
{:type :ok, :f :release, :value nil, :process 0, :time 6, :index 5}
{:type :invoke, :f :acquire, :value nil, :process 1, :time 7, :index 6}
{:type :ok, :f :acquire, :value nil, :process 1, :time 8, :index 7}
"""


def test_mutex_two_acquires_and_the_fixed_twin(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad, fixed = edn(tmp_path, "bad.edn", MUTEX_BAD), edn(tmp_path, "fixed.edn", MUTEX_FIXED)
    code, out, _ = run(capsys, "--explain", bad)
    assert code == 1 and "model mutex" in out and "acquire  [history 2..3]: illegal in state held" in out
    code, out, _ = run(capsys, fixed)
    assert code == 0 and "model mutex" in out


# jepsen.independent over a cas-register: key 7 reads 5 after 4 was written; key 3 is fine.
INDEPENDENT = """\
{:type :invoke, :f :write, :value [3 1], :process 0, :time 1, :index 0}
{:type :invoke, :f :write, :value [7 4], :process 1, :time 2, :index 1}
{:type :ok, :f :write, :value [3 1], :process 0, :time 3, :index 2}
{:type :ok, :f :write, :value [7 4], :process 1, :time 4, :index 3}
{:type :info, :f :start-partition, :value nil, :process :nemesis, :time 5, :index 4}
{:type :invoke, :f :read, :value [3 nil], :process 0, :time 6, :index 5}
{:type :invoke, :f :read, :value [7 nil], :process 1, :time 7, :index 6}
{:type :ok, :f :read, :value [3 1], :process 0, :time 8, :index 7}
{:type :ok, :f :read, :value [7 5], :process 1, :time 9, :index 8}
{:type :invoke, :f :cas, :value [3 [1 2]], :process 0, :time 10, :index 9}
{:type :fail, :f :cas, :value [3 [1 2]], :process 0, :time 11, :index 10, :error :mismatch}
"""


def test_independent_tuples_one_verdict_per_key(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = edn(tmp_path, "independent.edn", INDEPENDENT)
    code, out, _ = run(capsys, "--json", "--all-violations", path)
    s = json.loads(out)
    assert code == 1 and s["partitions"] == 2 and s["invalid_keys"] == [7] and s["model"] == "cas-register"


def run_folder(tmp_path: Path, results: str | None) -> Path:
    folder = tmp_path / "store" / "linearizable-register" / "20250101T000000.000Z"
    folder.mkdir(parents=True)
    shutil.copy(FIXTURES / "cas-register-independent-bad-key-3.edn", folder / "history.edn")
    if results is not None:
        (folder / "results.edn").write_text(results)
    return folder


def test_a_jepsen_run_folder_is_checked_and_compared(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    folder = run_folder(tmp_path, (FIXTURES / "run-bad-key-3" / "results.edn").read_text())
    code, out, _ = run(capsys, "--json", "--all-violations", str(folder))
    s = json.loads(out)
    assert code == 1 and s["path"] == str(folder / "history.edn") and s["invalid_keys"] == [3]
    assert s["jepsen"] == {"results": str(folder / "results.edn"), "valid": False, "linearizable": False,
                           "invalid_keys": [3], "compared": "linearizability verdict", "agree": True}
    code, out, _ = run(capsys, str(folder))
    assert code == 1 and "; agrees" in out


def test_a_disagreement_with_jepsen_is_said(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    claims_valid = (FIXTURES / "run-bad-key-3" / "results.edn").read_text().replace(":valid? false", ":valid? true")
    folder = run_folder(tmp_path, claims_valid.replace(":failures [3]", ":failures []"))
    code, out, _ = run(capsys, "--json", str(folder))
    jepsen = json.loads(out)["jepsen"]
    assert code == 1 and jepsen["agree"] is False and jepsen["linearizable"] is True
    assert jepsen["note"] == "DISAGREE: Fencepost says invalid, Jepsen's linearizability verdict is valid"
    assert "DISAGREE" in run(capsys, str(folder))[1]


def test_a_folder_without_a_history_is_one_clear_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, str(tmp_path))
    assert code == 3 and "Traceback" not in err
    assert err.strip() == (f"fencepost: error: {tmp_path}: is a directory with no history.edn or history.jsonl "
                           "in it, not a history file or a run folder")


def test_init_that_is_neither_json_nor_edn(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = edn(tmp_path, "nil.edn", NIL_READ)
    code, _, err = run(capsys, "--init", "{:x", path)
    assert code == 3 and err.startswith("fencepost: error: --init is neither JSON") and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
