from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from checkers.stats import StatsChecker
from harness.checker_protocol import CheckContext, Checker, run_checkers
from harness.history.op import Op
from harness.store import RunStore
from reports.cards import artifacts, make_card
from reports.render import write_report
from reports.run_view import load_run, verdict_of
from tests.reports.sample_runs import make_run

FIXTURES = Path(__file__).parent / "fixtures"
V0_RUN = FIXTURES / "v0" / "register-basic" / "20240501T120000.000Z"


@pytest.fixture
def v0_run(tmp_path: Path) -> Path:
    """A copy of the hand-written run an earlier Fencepost left: no results.json, a torn history tail."""
    dest = tmp_path / "store" / "register-basic" / V0_RUN.name
    shutil.copytree(V0_RUN, dest)
    return dest


def test_verdict_words_accept_every_spelling() -> None:
    assert [verdict_of(v) for v in (True, "true", "valid", False, "FALSE", "invalid")] == ["valid"] * 3 + [
        "invalid"] * 3
    assert {verdict_of(v) for v in ("unknown", None, 3, "maybe")} == {"unknown"}


def test_renders_a_run_an_earlier_version_wrote(v0_run: Path) -> None:
    out = write_report(v0_run)
    html = out.read_text(encoding="utf-8")
    assert out == v0_run / "report.html"
    assert 'data-verdict="unchecked"' in html and "UNCHECKED" in html
    assert "results.json is missing" in html
    assert "fencepost_version" in html and "leader_lease_ms" in html
    assert "20 ops" in html  # the torn last line was dropped
    assert "Drawn by the report from the history (perf, timeline)" in html
    for rel in ("perf/latency-raw.png", "perf/rate.png", "timeline.html"):
        assert (v0_run / rel).is_file()
        assert f'src="{rel}"' in html
    assert 'href="nodes/n1/node.log"' in html and 'href="history.jsonl"' in html
    assert not (v0_run / "results.json").exists()  # views never change the stored verdict


def test_the_committed_fixture_is_left_untouched() -> None:
    assert sorted(p.name for p in V0_RUN.iterdir()) == ["fencepost.log", "history.jsonl", "nodes", "test.json"]


def test_renders_with_every_piece_missing_or_broken(tmp_path: Path) -> None:
    run = tmp_path / "t" / "20240101T000000.000Z"
    run.mkdir(parents=True)
    (run / "test.json").write_text("[1, 2", encoding="utf-8")
    (run / "results.json").write_text('"just a string"', encoding="utf-8")
    (run / "history.jsonl").write_text('{"index": 0, "time": 0, "process": 0, "type": "bogus", "f": "r"}\n',
                                       encoding="utf-8")
    html = write_report(run).read_text(encoding="utf-8")
    assert "test.json could not be read" in html
    assert "results.json does not hold a JSON object" in html
    assert "history.jsonl could not be read" in html and "unknown type" in html
    assert "No plots." in html and "No timeline." in html and "No checker results." in html


class Crashing:
    name = "crashy"

    def check(self, history: Sequence[Op], ctx: CheckContext) -> dict[str, Any]:
        raise RuntimeError("model exploded <badly>")


def test_a_crashed_checker_shows_unknown_with_its_error_and_traceback(v0_run: Path) -> None:
    run = load_run(v0_run)
    assert run.history is not None
    checkers: list[Checker] = [StatsChecker(), Crashing()]
    results = run_checkers(checkers, run.history, CheckContext(run_dir=v0_run))
    run.run.write_results(results)
    html = write_report(v0_run, draw=False).read_text(encoding="utf-8")
    assert 'data-verdict="unknown"' in html
    assert "Checker crashed: RuntimeError: model exploded &lt;badly&gt;" in html
    assert "Traceback (most recent call last)" in html
    assert 'id="checker-crashy"' in html and 'href="#checker-crashy"' in html
    # the stats card uses its own table view
    assert "<th>f</th>" in html and "<td class=\"mono\">cas</td>" in html


def test_results_from_a_newer_or_older_version_render_generically(v0_run: Path) -> None:
    (v0_run / "lin").mkdir()
    (v0_run / "lin" / "key-1.html").write_text("<p>counterexample</p>", encoding="utf-8")
    results = {
        "valid?": False,
        "schema": 7,
        "checkers": {
            "linearizability": {
                "valid": "false", "explanation": "key 1: read saw <script>alert(1)</script> after write 4",
                "per_key": {"0": {"valid": True}, "1": {"valid": False, "explanation": "stale read"}},
                "counterexample": {"html": "lin/key-1.html", "ops": [1, 2, 3]},
                "escape": "../../../outside.html", "absolute": "/etc/passwd.html",
            },
            "legacy": True,
            "stats": {"valid": True, "by_f": "not a mapping"},
            "future": {"valid": "maybe", "new_field": {"deep": [1, {"x": 2}]}},
        },
    }
    (v0_run / "results.json").write_text(json.dumps(results), encoding="utf-8")
    html = write_report(v0_run, draw=False).read_text(encoding="utf-8")
    assert 'data-verdict="invalid"' in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script>alert" not in html
    assert '<iframe class="view short" src="lin/key-1.html"' in html
    assert "outside.html" in html and 'src="../../../outside.html"' not in html
    assert 'href="/etc/passwd.html"' not in html
    assert "per_key / 1" in html and "stale read" in html
    assert "schema" in html and "new_field" in html
    assert 'id="checker-legacy"' in html and 'id="checker-future"' in html


def test_artifacts_are_only_existing_files_inside_the_run(tmp_path: Path) -> None:
    (tmp_path / "a.png").write_bytes(b"x")
    (tmp_path.parent / "outside.png").write_bytes(b"x")
    result = {"plots": ["a.png", "missing.png", "../outside.png"], "deep": {"more": {"html": "a.png"}}}
    assert artifacts(result, tmp_path) == ["a.png"]
    card = make_card("stats", {"valid": True, "by_f": {"read": {"ok": "x"}}}, tmp_path)
    assert card.verdict == "valid"


def test_sample_runs_render_their_verdicts_and_views(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    valid = write_report(make_run(store).path).read_text(encoding="utf-8")
    invalid = write_report(make_run(store, invalid=True).path).read_text(encoding="utf-8")
    assert 'data-verdict="valid"' in valid and "VALID" in valid
    assert "Drawn by the report from the history (perf, timeline)" in valid  # checkers draw nothing
    assert valid.count('<img class="plot"') == 3 and 'src="timeline.html"' in valid
    assert 'data-verdict="invalid"' in invalid
    assert "Key 1 is not linearizable." in invalid and 'src="linearizability/key-1.html"' in invalid
    assert invalid.index('id="checker-linearizability"') < invalid.index('id="checker-stats"')
    assert "KeyError: &#39;lease&#39;" in invalid
