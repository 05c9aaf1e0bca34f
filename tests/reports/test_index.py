from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.store import RunStore
from reports.index import campaign_matrix, count_lines, detection_rows, render_campaign, render_index, summaries
from tests.reports.sample_runs import make_run
from tests.reports.test_render import V0_RUN


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> RunStore:
    store = RunStore(tmp_path_factory.mktemp("index") / "store")
    make_run(store, campaign="c1", case="register / partition / none")
    make_run(store, invalid=True, campaign="c1", case="register / partition / stale-read")
    make_run(store, seed=8, campaign="c1", case="register / partition / none")
    shutil.copytree(V0_RUN, store.root / "register-basic" / V0_RUN.name)
    return store


def test_summaries_cover_every_run_newest_first(store: RunStore) -> None:
    rows = summaries(store)
    assert len(rows) == 4
    assert rows == sorted(rows, key=lambda r: r.timestamp, reverse=True)
    v0 = next(r for r in rows if r.name == "register-basic")
    assert (v0.verdict, v0.workload, v0.nemesis, v0.ops, v0.campaign) == ("unchecked", "register", "partition",
                                                                          21, None)
    assert v0.case == "register / partition / none"
    bad = next(r for r in rows if r.verdict == "invalid")
    assert (bad.bug, bad.nemesis, bad.campaign) == ("stale-read-on-minority", "partition, kill", "c1")
    assert bad.ops == len((store.root / bad.rel / "history.jsonl").read_text().splitlines())


def test_the_index_links_every_report_and_campaign(store: RunStore) -> None:
    html = render_index(store)
    for row in summaries(store):
        assert f'href="{row.rel}/report.html"' in html
    assert 'href="_campaign/c1"' in html
    assert html.count('<tr class="verdict-') == 4
    assert 'id="filter-text"' in html and "sortBy" in html


def test_the_campaign_matrix_groups_cases_by_verdict(store: RunStore) -> None:
    matrix = campaign_matrix(summaries(store), "c1")
    assert list(matrix) == ["register / partition / none", "register / partition / stale-read"]
    assert [len(matrix["register / partition / none"][v]) for v in ("invalid", "unknown", "valid")] == [0, 0, 2]
    assert len(matrix["register / partition / stale-read"]["invalid"]) == 1
    html = render_campaign(store, "c1")
    assert html is not None and 'data-case="register / partition / stale-read"' in html
    assert 'data-verdict="invalid" data-count="1"' in html
    assert render_campaign(store, "nope") is None


def test_line_counts_skip_blank_lines_and_follow_changes(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    path.write_text('{"a":1}\n\n{"b":2}', encoding="utf-8")
    assert count_lines(path) == 2
    path.write_text('{"a":1}\n{"b":2}\n{"c":3}\n', encoding="utf-8")
    assert count_lines(path) == 3
    assert count_lines(tmp_path / "missing") is None


def test_an_unreadable_results_file_still_gives_a_row(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    run = store.create_run("t", {"name": "t", "nemesis": {"odd": "shape"}})
    run.results_json.write_text("{broken", encoding="utf-8")
    (row,) = summaries(store)
    assert row.verdict == "unchecked" and row.ops is None and json.loads(row.nemesis) == {"odd": "shape"}


def test_a_campaign_of_bug_runs_gets_a_detection_table(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    for seed in (1, 2):
        make_run(store, invalid=True, seed=seed, campaign="matrix-1")
    make_run(store, seed=3, campaign="matrix-1")
    make_run(store, seed=4, campaign="plain")
    rows = {r.bug: r for r in detection_rows(summaries(store), "matrix-1")}
    assert rows["stale-read-on-minority"].detected == 2 and rows["stale-read-on-minority"].runs == 2
    assert rows[None].runs == 1 and rows[None].detected == 0
    assert detection_rows(summaries(store), "plain") == []
    page = render_campaign(store, "matrix-1")
    assert page is not None and 'id="detection"' in page and 'data-bug="stale-read-on-minority"' in page
    assert 'id="detection"' not in (render_campaign(store, "plain") or "")
