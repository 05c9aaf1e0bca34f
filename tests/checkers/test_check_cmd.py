"""``fencepost check``: one line or JSON object per file, the worst verdict as exit code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli.main import main
from harness.history.jsonl import write_jsonl
from harness.history.op import Op, OpType
from tests.conftest import PORCUPINE

DATA = PORCUPINE


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Exit code, stdout without ``--json``'s per-partition lines (one object per file is left), stderr."""
    with pytest.raises(SystemExit) as e:
        main(["check", *args])
    out, err = capsys.readouterr()
    out = "".join(line for line in out.splitlines(keepends=True) if not line.startswith('{"event": "partition"'))
    return int(e.value.code or 0), out, err


def write(path: Path, events: list[tuple[int, str, str, object]]) -> str:
    write_jsonl([Op(i, i, p, OpType(t), f, None, v) for i, (p, t, f, v) in enumerate(events)], path)
    return str(path)


@pytest.fixture
def valid_file(tmp_path: Path) -> str:
    return write(tmp_path / "ok.jsonl", [(0, "invoke", "write", 1), (0, "ok", "write", 1),
                                         (1, "invoke", "read", None), (1, "ok", "read", 1)])


@pytest.fixture
def invalid_file(tmp_path: Path) -> str:
    return write(tmp_path / "bad.jsonl", [(0, "invoke", "write", 1), (0, "ok", "write", 1),
                                          (1, "invoke", "read", None), (1, "ok", "read", 2)])


def test_valid_and_invalid_lines_and_exit_code(capsys: pytest.CaptureFixture[str], valid_file: str,
                                               invalid_file: str) -> None:
    code, out, _ = run(capsys, valid_file, invalid_file)
    lines = out.strip().splitlines()
    assert code == 1
    assert lines[0].startswith(valid_file) and "valid" in lines[0]
    assert lines[1].startswith(invalid_file) and "INVALID" in lines[1]


def test_json_fields(capsys: pytest.CaptureFixture[str], valid_file: str, invalid_file: str) -> None:
    code, out, _ = run(capsys, "--json", valid_file, invalid_file)
    a, b = (json.loads(line) for line in out.strip().splitlines())
    assert code == 1
    for obj in (a, b):
        assert {"path", "valid", "model", "ops", "seconds", "invalid_keys"} <= obj.keys()
    assert a["valid"] is True and b["valid"] is False and b["model"] == "register" and b["ops"] == 2


def test_init_changes_the_verdict(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write(tmp_path / "init.jsonl", [(0, "invoke", "read", None), (0, "ok", "read", 0)])
    assert run(capsys, path)[0] == 1
    assert run(capsys, "--init", "0", path)[0] == 0


def test_error_exits_3_without_traceback(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                         valid_file: str) -> None:
    bad = tmp_path / "junk.jsonl"
    bad.write_text('{"index": "x"}\n')
    code, _, err = run(capsys, valid_file, str(bad))
    assert code == 3 and "Traceback" not in err and "junk.jsonl" in err
    assert run(capsys, "--init", "{nope", valid_file)[0] == 3


def test_html_and_explain(capsys: pytest.CaptureFixture[str], tmp_path: Path, invalid_file: str) -> None:
    code, out, _ = run(capsys, "--explain", "--html", str(tmp_path / "html"), invalid_file)
    assert code == 1 and "Not linearizable" in out and "read -> 2" in out
    page = (tmp_path / "html" / "bad.jsonl.html").read_text()
    assert "<svg" in page and "read -&gt; 2" in page


@pytest.mark.skipif(not DATA.exists(), reason="Porcupine test data not found")
def test_porcupine_files_and_no_partition(capsys: pytest.CaptureFixture[str]) -> None:
    files = [str(DATA / "jepsen" / "etcd_002.log"), str(DATA / "kv" / "c10-bad.txt")]
    code, out, _ = run(capsys, "--json", *files)
    a, b = (json.loads(line) for line in out.strip().splitlines())
    assert code == 1 and a["model"] == "etcd" and a["valid"] is True and b["model"] == "kv" and b["invalid_keys"]
    code, out, _ = run(capsys, "--json", "--no-partition", files[1])
    assert code == 1 and json.loads(out)["partitions"] == 1


def test_timeout_gives_unknown_never_valid(capsys: pytest.CaptureFixture[str]) -> None:
    if not DATA.exists():
        pytest.skip("Porcupine test data not found")
    code, out, _ = run(capsys, "--json", "--no-partition", "--timeout", "0.001", str(DATA / "kv" / "c50-ok.txt"))
    assert json.loads(out)["valid"] in ("unknown", True)
    assert code in (0, 2)
    assert (code == 2) == (json.loads(out)["valid"] == "unknown")


def _strip_times(out: str) -> list[dict[str, object]]:
    objs = [json.loads(line) for line in out.strip().splitlines()]
    for o in objs:
        o.pop("seconds", None)
        o.pop("check_seconds", None)
    return objs


@pytest.mark.skipif(not DATA.exists(), reason="Porcupine test data not found")
def test_parallel_workers_report_like_one_process_in_the_order_given(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, valid_file: str, invalid_file: str) -> None:
    junk = tmp_path / "junk.jsonl"
    junk.write_text('{"index": "x"}\n')
    files = [str(DATA / "kv" / "c10-ok.txt"), valid_file, str(junk), str(DATA / "jepsen" / "etcd_000.log"),
             str(DATA / "kv" / "c50-bad.txt"), invalid_file, str(DATA / "jepsen" / "etcd_002.log")]
    code1, out1, err1 = run(capsys, "--json", "--jobs", "1", *files)
    code2, out2, err2 = run(capsys, "--json", "--jobs", "2", *files)
    assert code1 == code2 == 3 and err1 == err2 and "junk.jsonl" in err2
    assert _strip_times(out1) == _strip_times(out2)
    assert [o["path"] for o in _strip_times(out2)] == files


def test_etcd_logs_with_noise_and_bad_lines(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    events = ["INFO  jepsen.util - 0\t:invoke\t:write\t1", "INFO  jepsen.util - 0\t:ok\t:write\t1",
              "INFO  jepsen.util - 1\t:invoke\t:cas\t[1 2]", "INFO  jepsen.util - 1\t:ok\t:cas\t[1  2]  ",
              "INFO  jepsen.util - :nemesis\t:info\t:start\tnil",
              "INFO  jepsen.util - 0\t:invoke\t:read\tnil", "INFO  jepsen.util - 0\t:ok\t:read\t2"]
    clean = tmp_path / "clean.log"
    clean.write_text("\n".join(events) + "\n")
    noisy = tmp_path / "noisy.log"
    noisy.write_text("INFO  jepsen.core - setting up\n\n" + "\n".join(events[:3]) + "\nWARN something\n"
                     + "\n".join(events[3:]))
    _, out, _ = run(capsys, "--json", str(clean), str(noisy))
    a, b = _strip_times(out)
    assert a["valid"] is b["valid"] is True and a["ops"] == b["ops"] == 3
    bad = tmp_path / "bad.log"
    bad.write_text("\n".join(events[:2]) + "\nnoise\nINFO  jepsen.util - 0\t:invoke\n"
                   "INFO  jepsen.util - x\t:invoke\t:write\t1\n")
    code, _, err = run(capsys, str(bad))
    assert code == 3 and f"{bad}:4" in err and f"{bad}:5" in err


def test_an_unkeyed_history_names_no_invalid_key(capsys: pytest.CaptureFixture[str]) -> None:
    history = Path(__file__).resolve().parents[2] / "examples" / "histories" / "etcd-failed-cas.invalid.log"
    code, out, _ = run(capsys, str(history))
    assert code == 1 and "INVALID" in out and "invalid keys" not in out
