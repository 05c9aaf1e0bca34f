"""Results pages: a command's final JSON, with its provenance, as a Markdown page of the docs, listed by index.md.

The payloads are the real shapes: ``fencepost matrix``'s last line built by the same code the command runs
(cells summarized by :mod:`harness.bug_matrix`), and a summary with per-module records as ``fencepost mutate``
prints. ``--results-page`` is driven through the click command with the campaign itself replaced (no
campaign runs here: the matrix's cells are made up, the rest of the command is real)."""

from __future__ import annotations

import json
import platform
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from harness import bug_matrix
from harness.bug_matrix import Cell, passed, summarize
from reports.results_page import (
    REPO,
    Provenance,
    collect_provenance,
    render_results_page,
    update_index,
    write_results_page,
)

CELLS = [
    Cell("gap-ack", "gap-ack", 1, False, ["amnesia", "linearizable"], 7.8, "store/a/1", 40.0),
    Cell("gap-ack", "gap-ack", 2, False, ["amnesia"], 9.1, "store/a/2", 41.0),
    Cell("stale-leader-reads", "stale-leader-reads", 1, True, [], None, "store/b/1", 70.0),
    Cell(None, "gap-ack", 1, True, [], None, "store/c/1", 39.0),
]
PROV = Provenance(date="2026-11-26 12:00:00 UTC", commit="0123456789abcdef0123456789abcdef01234567", dirty=True,
                  machine="x86_64", cpus=2, os="Debian GNU/Linux 13 (Linux 6.1)", seeds=(1, 2, 3),
                  command="fencepost matrix --seeds 3")


def matrix_payload() -> dict[str, Any]:
    rows = summarize(CELLS)
    return {"matrix": [r.as_dict() for r in rows], "passed": passed(rows, 0.9)}


def test_a_matrix_payload_becomes_a_table_with_its_provenance() -> None:
    page = render_results_page(matrix_payload(), PROV, title="Detection matrix: reference")
    lines = page.splitlines()
    assert lines[:5] == ["---", 'title: "Detection matrix: reference"', 'date: "2026-11-26 12:00:00 UTC"',
                         'commit: "0123456789abcdef0123456789abcdef01234567"', "---"]
    assert "# Detection matrix: reference" in lines
    assert "| commit | `0123456789abcdef0123456789abcdef01234567` with uncommitted changes |" in lines
    assert "| machine | x86_64, 2 CPUs |" in lines
    assert "| seeds | 1-3 |" in lines
    assert "| command | `fencepost matrix --seeds 3` |" in lines
    assert "| passed | no |" in lines  # stale-leader-reads was missed
    header = "| bug | runs | detected | rate | median_time_to_detection_s | catching | errored |"
    assert header in lines
    body = lines[lines.index(header) + 2:]
    assert body[:3] == ["| gap-ack | 2 | 2 | 1 | 8.4 | amnesia (2), linearizable (1) | 0 |",
                        "| stale-leader-reads | 1 | 0 | 0 | - | - | 0 |",
                        "| - | 1 | 0 | 0 | - | - | 0 |"]
    payload_json = page.split("```json\n", 1)[1].split("\n```", 1)[0]
    assert json.loads(payload_json) == matrix_payload()


def test_any_payload_shape_renders() -> None:
    summary = {"label": "reference", "score": 0.875, "finished": True, "mutants": 8,
               "per_module": {"rules.py": {"caught": 6, "missed": 1, "score": 0.857},
                              "leader.py": {"caught": 1, "missed": 0, "score": 1.0}},
               "power": {"kill": 3, "partition": 5}, "missed": [], "notes": ["a | b", "c"]}
    page = render_results_page(summary, PROV, title="Mutation score")
    assert "| score | 0.875 |" in page and "| finished | yes |" in page
    assert "|  | caught | missed | score |" in page
    assert "| rules.py | 6 | 1 | 0.857 |" in page
    assert "| kill | 3 |" in page  # a flat mapping: field and value
    assert '"a | b"' in page  # a list of scalars is shown as JSON, its pipe harmless there


def test_write_results_page_writes_the_page_and_lists_it_newest_first(tmp_path: Path) -> None:
    out = tmp_path / "results"
    older = Provenance(**{**PROV.__dict__, "date": "2026-11-25 08:00:00 UTC", "commit": "a" * 40})
    first = write_results_page(matrix_payload(), out, name="matrix-etcd", title="Detection matrix: etcd",
                               provenance=older)
    second = write_results_page(matrix_payload(), out, name="matrix-reference", provenance=PROV)
    assert first == out / "matrix-etcd.md" and second == out / "matrix-reference.md"
    index = (out / "index.md").read_text(encoding="utf-8").splitlines()
    assert index[0] == "# Results"
    listed = [line for line in index if line.startswith("| [")]
    assert listed == ["| [matrix-reference](matrix-reference.md) | 2026-11-26 12:00:00 UTC | `0123456789ab` |",
                      "| [Detection matrix: etcd](matrix-etcd.md) | 2026-11-25 08:00:00 UTC | `aaaaaaaaaaaa` |"]
    write_results_page({"passed": True}, out, name="matrix-etcd", provenance=PROV)  # replaces the older page
    assert "| passed | yes |" in first.read_text(encoding="utf-8")
    assert len([line for line in update_index(out).read_text().splitlines() if line.startswith("| [")]) == 2


def test_an_empty_folder_gets_an_index_that_says_so(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("# not generated\n")
    text = update_index(tmp_path).read_text(encoding="utf-8")
    assert "No results have been generated here yet." in text and "notes" not in text


@pytest.mark.parametrize("name", ["", "../x", "a/b", ".hidden"])
def test_a_page_name_must_be_a_plain_file_name(tmp_path: Path, name: str) -> None:
    with pytest.raises(ValueError, match="plain file name"):
        write_results_page({}, tmp_path, name=name, provenance=PROV)


def test_the_provenance_is_this_checkout_and_this_machine() -> None:
    now = datetime(2026, 11, 26, 9, 30, 5, tzinfo=UTC)
    prov = collect_provenance(seeds=[3, 1, 2, 7], command=["fencepost", "matrix", "--bug", "a b"], now=now)
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    assert prov.commit == head
    assert isinstance(prov.dirty, bool)
    assert prov.date == "2026-11-26 09:30:05 UTC"
    assert prov.machine == platform.machine() and prov.cpus >= 1 and prov.os
    assert prov.command == "fencepost matrix --bug 'a b'"
    assert dict(prov.rows())["seeds"] == "1, 2, 3, 7"
    outside = collect_provenance(repo=Path("/"))
    assert outside.commit is None and outside.dirty is None
    assert dict(outside.rows())["commit"] == "unknown (not a git checkout)"


def test_fencepost_matrix_writes_its_results_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.cli.matrix_cmd import matrix

    seen: dict[str, Any] = {}

    def fake_run_matrix(bugs: list[str], seeds: range, store: str, **kwargs: Any) -> list[Cell]:
        seen.update(bugs=bugs, seeds=list(seeds))
        return [Cell("gap-ack", "gap-ack", s, False, ["amnesia"], 7.0 + s, f"{store}/run{s}", 30.0) for s in seeds]

    monkeypatch.setattr(bug_matrix, "run_matrix", fake_run_matrix)
    out = tmp_path / "results"
    result = CliRunner().invoke(matrix, ["--bug", "gap-ack", "--seeds", "2", "--first-seed", "4", "--no-clean",
                                         "--store", str(tmp_path / "store"), "--results-page", str(out)])
    assert result.exit_code == 0, result.output
    assert seen == {"bugs": ["gap-ack"], "seeds": [4, 5]}
    last = json.loads(result.stdout.strip().splitlines()[-1])  # the JSON line is still the last
    page = (out / "matrix-reference.md").read_text(encoding="utf-8")
    assert "# Detection matrix: reference" in page
    assert "| seeds | 4, 5 |" in page
    assert "| gap-ack | 2 | 2 | 1 | 11.5 | amnesia (2) |" in page
    assert json.loads(page.split("```json\n", 1)[1].split("\n```", 1)[0]) == last
    assert "[Detection matrix: reference](matrix-reference.md)" in (out / "index.md").read_text(encoding="utf-8")
