"""Bad input to ``fencepost check`` gives exit 3 and one line per problem naming file:line, never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness.history.op import Op, OpType
from harness.history.parquet import write_parquet

INV = '{"index":%d,"time":%d,"process":0,"type":"invoke","f":"read","value":null}'
OK = '{"index":%d,"time":%d,"process":0,"type":"ok","f":"read","value":1}'

# (name, file name, content, format or None for auto, line expected in the message, words expected)
CASES: list[tuple[str, str, str, str | None, int, str]] = [
    ("json-garbage", "h.jsonl", INV % (0, 0) + "\n{not json\n", None, 2, "unparseable JSON"),
    ("json-truncated", "h.jsonl", INV % (0, 0) + '\n{"index":1,"ti', "jsonl", 2, "unparseable JSON"),
    ("json-array", "h.jsonl", '{"index":0,"time":0,"process":0,"type":"invoke","f":"r"}\n[1,2]\n', None, 2,
     "expected a map"),
    ("unknown-type", "h.jsonl", INV % (0, 0) + '\n{"index":1,"time":1,"process":0,"type":"done","f":"read"}\n',
     None, 2, "unknown type"),
    ("missing-type", "h.jsonl", '{"index":0,"time":0,"process":0,"f":"read"}\n', None, 1, "missing field 'type'"),
    ("missing-process", "h.jsonl", '{"index":0,"time":0,"type":"invoke","f":"read"}\n', None, 1,
     "missing field 'process'"),
    ("missing-f", "h.jsonl", '{"index":0,"time":0,"process":0,"type":"invoke"}\n', None, 1, "missing field 'f'"),
    ("index-string", "h.jsonl", '{"index":"zero","time":0,"process":0,"type":"invoke","f":"read"}\n', None, 1,
     "field 'index' must be an integer"),
    ("time-float", "h.jsonl", '{"index":0,"time":1.5,"process":0,"type":"invoke","f":"read"}\n', None, 1,
     "field 'time' must be an integer"),
    ("time-negative", "h.jsonl", '{"index":0,"time":-4,"process":0,"type":"invoke","f":"read"}\n', None, 1,
     "must not be negative"),
    ("process-bool", "h.jsonl", '{"index":0,"time":0,"process":true,"type":"invoke","f":"read"}\n', None, 1,
     "field 'process'"),
    ("process-name", "h.jsonl", '{"index":0,"time":0,"process":"bob","type":"invoke","f":"read"}\n', None, 1,
     "field 'process'"),
    ("f-number", "h.jsonl", '{"index":0,"time":0,"process":0,"type":"invoke","f":7}\n', None, 1, "field 'f'"),
    ("orphan-completion", "h.jsonl", OK % (0, 0) + "\n", None, 1, "without an invocation"),
    ("double-invoke", "h.jsonl", INV % (0, 0) + "\n" + INV % (1, 1) + "\n", None, 2, "still open"),
    ("time-backwards", "h.jsonl", INV % (0, 10) + "\n" + OK % (1, 9) + "\n", None, 2, "time goes backwards"),
    ("duplicate-index", "h.jsonl", INV % (4, 0) + "\n" + OK % (4, 1) + "\n", None, 2, "duplicate index 4"),
    ("reuse-after-info", "h.jsonl",
     INV % (0, 0) + '\n{"index":1,"time":1,"process":0,"type":"info","f":"read"}\n' + INV % (2, 2) + "\n",
     None, 3, "after its op ended in info"),
    ("not-utf8", "h.jsonl", INV % (0, 0) + "\n\udcff\n", "jsonl", 2, "not UTF-8"),
    ("edn-unbalanced", "h.edn", "[{:process 0, :type :invoke, :f :read}\n {:process 0 :type :ok :f :read]\n", None,
     2, "unbalanced"),
    ("edn-unclosed-string", "h.edn", '[{:process 0, :type :invoke, :f :read, :value "abc}\n]\n', None, 1,
     "unterminated string"),
    ("edn-not-a-map", "h.edn", "[{:process 0, :type :invoke, :f :read}\n 42\n]\n", None, 2, "expected an op map"),
    ("edn-unknown-type", "h.edn", "[{:process 0, :type :invoke, :f :read}\n{:process 0, :type :yes, :f :read}]",
     None, 2, "unknown type"),
    ("edn-bad-token", "h.edn",
     "({:process 0, :type :invoke, :f :read}\n {:process 0, :type :ok, :f :read, :value #x 1})",
     None, 2, "unparseable EDN"),
    ("etcd-bad-type", "etcd.log",
     "INFO  jepsen.util - 0\t:invoke\t:read\tnil\nINFO  jepsen.util - 0\t:oops\t:read\t1\n",
     "porcupine-etcd", 2, "unknown type"),
    ("etcd-bad-value", "etcd.log", "INFO  jepsen.util - 0\t:invoke\t:write\tfour\n", None, 1, "unparseable value"),
    ("etcd-orphan", "etcd.log", "INFO  jepsen.util - 3\t:ok\t:read\t1\n", None, 1, "without an invocation"),
    ("kv-garbage-line", "kv.txt",
     '{:process 0, :type :invoke, :f :get, :key "1", :value nil}\n{:process 0, :type :ok, :f :get, :key "1", :value\n',
     "porcupine-kv", 2, "unclosed"),
    ("parquet-not-parquet", "h.parquet", "PAR1 this is not parquet", "parquet", 1, "not a readable Parquet"),
]


def run_check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness.cli.main", "check", *args],
                          capture_output=True, text=True, timeout=120)


def test_there_are_at_least_twenty_cases() -> None:
    assert len(CASES) >= 20


@pytest.mark.parametrize(("name", "filename", "content", "fmt", "line", "words"), CASES, ids=[c[0] for c in CASES])
def test_malformed_input_exits_3_with_file_and_line(
    tmp_path: Path, name: str, filename: str, content: str, fmt: str | None, line: int, words: str
) -> None:
    path = tmp_path / filename
    path.write_bytes(content.encode("utf-8", errors="surrogateescape"))
    result = run_check(*(["--format", fmt] if fmt else []), str(path))
    assert result.returncode == 3, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert any(f"{path}:{line}:" in ln and words in ln for ln in lines), result.stderr
    assert all(ln.startswith("fencepost: error:") for ln in lines), result.stderr


def test_parquet_with_wrong_column_types(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "h.parquet"
    pq.write_table(pa.table({"process": ["0"], "type": ["invoke"], "f": ["read"], "value": ["{bad json"]}), path)
    result = run_check(str(path))
    assert result.returncode == 3
    assert f"{path}:1:" in result.stderr and "Traceback" not in result.stderr


def test_missing_file_and_directory(tmp_path: Path) -> None:
    missing = run_check(str(tmp_path / "nope.jsonl"))
    assert missing.returncode == 3 and "no such file" in missing.stderr and "Traceback" not in missing.stderr
    directory = run_check(str(tmp_path))
    assert directory.returncode == 3 and "directory" in directory.stderr


def test_bad_option_is_one_line_exit_3(tmp_path: Path) -> None:
    ok = tmp_path / "ok.parquet"
    write_parquet([Op(0, 0, 0, OpType.INVOKE, "read")], ok)
    result = run_check("--format", "yaml", str(ok))
    assert result.returncode == 3
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
