"""``fencepost report RUN_DIR`` renders any run folder again, old ones included; bad paths exit 3."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from harness.store import RunStore
from tests.reports.sample_runs import make_run
from tests.reports.test_render import V0_RUN


def fencepost(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness.cli.main", *args], capture_output=True, text=True,
                          timeout=120, cwd=cwd)


def test_renders_a_run_an_earlier_version_wrote(tmp_path: Path) -> None:
    run = tmp_path / "register-basic" / V0_RUN.name
    shutil.copytree(V0_RUN, run)
    out = fencepost("report", str(run))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(run / "report.html")
    html = (run / "report.html").read_text(encoding="utf-8")
    assert 'data-verdict="unchecked"' in html and "results.json is missing" in html
    assert (run / "timeline.html").is_file() and (run / "perf" / "latency-raw.png").is_file()


def test_renders_again_and_accepts_a_store_for_its_latest_run(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "store")
    run = make_run(store, invalid=True)
    out = fencepost("report", "--no-draw", str(store.root))
    assert out.returncode == 0, out.stderr
    assert Path(out.stdout.strip()).resolve() == run.report_path.resolve()
    first = run.report_path.read_text(encoding="utf-8")
    assert 'data-verdict="invalid"' in first and "Key 1 is not linearizable." in first
    assert not (run.path / "perf").exists()  # --no-draw
    run.report_path.unlink()
    assert fencepost("report", "--no-draw", str(run.path)).returncode == 0
    assert run.report_path.read_text(encoding="utf-8") == first


def test_a_missing_or_foreign_directory_exits_3_with_one_line(tmp_path: Path) -> None:
    out = fencepost("report", str(tmp_path / "nope"))
    assert out.returncode == 3
    assert out.stderr.strip().count("\n") == 0 and "no such run directory" in out.stderr
    out = fencepost("report", str(tmp_path))
    assert out.returncode == 3 and "not a run directory" in out.stderr
