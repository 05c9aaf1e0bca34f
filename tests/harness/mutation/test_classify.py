"""Classes, the score per module, detection power, the final JSON line's figures and the campaign page."""

from __future__ import annotations

import json
from pathlib import Path

from harness.mutation.classify import BROKEN, CAUGHT, EQUIVALENT, MISSED, UNKNOWN, MutantResult, classify
from harness.mutation.mutants import Mutant
from harness.mutation.runner import RunResult, read_history
from harness.mutation.summary import detection_power, figures, summarize, write_page


def run(seed: int, code: int | None, ops: int = 100, at: float | None = None, package: str | None = None,
        **kw: object) -> RunResult:
    return RunResult(seed, package, code, client_ops=ops, first_anomaly_s=at, **kw)  # type: ignore[arg-type]


def mutant(module: str = "system/rules.py", n: int = 0) -> Mutant:
    return Mutant(module, "core/ReplaceComparisonOperator_Lt_Gt", n, 10 + n, "if a < b:", "if a > b:")


def test_a_run_outcome_follows_its_exit_and_its_history() -> None:
    assert [run(1, c).outcome for c in (0, 1, 2, 3, -9, None)] == [
        "passed", "caught", "unknown", "error", "error", "timeout"]
    assert [run(1, c, ops=0).outcome for c in (0, 1, 2, 3)] == ["broken-start"] * 4
    assert run(1, 1, at=12.0).caught_within(30) and not run(1, 1, at=31.0).caught_within(30)
    assert not run(1, 1).caught_within(60)  # caught, but neither the evidence nor the test's end has a time
    assert run(1, 1, test_end_s=27.0).caught_within(30) and not run(1, 1, test_end_s=33.0).caught_within(30)
    assert not run(1, 1, at=31.0, test_end_s=20.0).caught_within(30)  # the evidence's own time comes first
    # No time cited (log-pattern, convergence): the campaign's length counts, before the history's end.
    timeless = run(1, 1, test_end_s=71.5, time_limit_s=60.0)
    assert timeless.caught_within(60) and not timeless.caught_within(30)
    assert not run(1, 1, at=45.0, time_limit_s=60.0).caught_within(30)
    # Evidence from the final phase, after the time limit (recovery's retries): the campaign's length counts.
    late = run(1, 1, at=71.2, test_end_s=102.0, time_limit_s=60.0)
    assert late.evidence_s == 60.0 and late.caught_within(60) and not late.caught_within(30)


def test_classes_from_the_campaigns_runs() -> None:
    assert classify([run(1, 0), run(2, 1)]) == (CAUGHT, "")
    assert classify([run(1, 0), run(2, 0)]) == (MISSED, "")
    status, why = classify([run(1, 3, ops=0), run(2, 0, ops=0)])
    assert status == BROKEN and "seed 1: exit 3, 0 client ops (broken-start)" in why
    assert classify([run(1, 0), run(2, 3, ops=0)])[0] == UNKNOWN
    assert classify([run(1, 0), run(2, 2)])[0] == UNKNOWN
    assert classify([run(1, None)])[0] == UNKNOWN
    assert classify([])[0] == UNKNOWN


def results() -> list[MutantResult]:
    return [
        MutantResult(mutant(n=0), CAUGHT, runs=[run(1, 1, at=5.0), run(1, 1, at=40.0, package="kill"),
                                                run(1, 0, package="partition")]),
        MutantResult(mutant(n=1), CAUGHT, runs=[run(1, 1, at=45.0), run(1, 0, package="kill"),
                                                run(1, 1, at=20.0, package="partition")]),
        MutantResult(mutant(n=2), MISSED, diff="--- a\n+++ b\n-if a < b:\n+if a > b:\n",
                     runs=[run(1, 0, faults={"kill": 3, "partition": 1},
                               fault_events=[{"at_s": 2.5, "f": "start-kill", "value": {"target": "leader"}}])]),
        MutantResult(mutant("system/wal.py", 0), BROKEN, "seed 1: exit 3", runs=[run(1, 3, ops=0, output="boom")]),
        MutantResult(mutant("system/wal.py", 1), UNKNOWN, "seed 1: exit 2", runs=[run(1, 2)]),
        MutantResult(mutant("system/wal.py", 2), EQUIVALENT, "n only grows"),
    ]


def test_score_per_module_and_detection_power() -> None:
    s = summarize(results(), label="default", packages=["kill", "partition"], campaign="c1")
    assert s["counts"] == {"caught": 2, "missed": 1, "unknown": 1, "broken": 1, "equivalent": 1}
    assert s["score"] == 0.5  # 2 caught of 4 scored: broken and equivalent count neither way
    assert s["by_module"]["system/rules.py"]["score"] == round(2 / 3, 4)
    assert s["by_module"]["system/wal.py"] == {"caught": 0, "missed": 0, "unknown": 1, "broken": 1, "equivalent": 1,
                                               "mutants": 3, "score": 0.0}
    power = detection_power(results(), "default", ["kill", "partition"])
    assert power["default"] == {"mutants": 4, "caught": 0.5, "within_30s": 0.25, "within_60s": 0.5}
    assert power["kill"] == {"mutants": 4, "caught": 0.25, "within_30s": 0.0, "within_60s": 0.25}
    assert power["partition"] == {"mutants": 4, "caught": 0.25, "within_30s": 0.25, "within_60s": 0.25}
    line = figures(s)
    assert "mutants" not in line and line["missed"] == ["system/rules.py:ReplaceComparisonOperator_Lt_Gt:2"]
    json.dumps(line)


def test_a_result_reads_back_from_the_summary() -> None:
    for r in results():
        back = MutantResult.from_dict(json.loads(json.dumps(r.as_dict())))
        assert back.mutant == r.mutant and back.status == r.status and back.runs == r.runs


def test_the_page_shows_missed_diffs_faults_scores_and_power(tmp_path: Path) -> None:
    s = summarize(results(), label="default", packages=["kill"], campaign="c/1", system="reference", seeds=[1],
                  time_limit=20.0, stale_equivalents=[{"id": "system/x.py:AddNot:0", "why": "no such mutant"}],
                  started="now", wall_s=1.0, finished=True, command="fencepost mutate --sample 4")
    page = write_page(s, tmp_path / "mutation")
    assert page is not None and page == tmp_path / "mutation" / "c-1.html"
    html = page.read_text()
    assert 'id="score">score 50%' in html
    missed = html[html.index("Missed mutants (1)"):html.index("Broken at start, or unknown")]
    assert "system/rules.py:ReplaceComparisonOperator_Lt_Gt:2" in missed and "+if a &gt; b:" in missed
    assert "kill x3" in missed and "2.5 s start-kill target=leader" in missed
    assert '[[mutant]]\nid = &#34;system/rules.py:ReplaceComparisonOperator_Lt_Gt:2&#34;' in missed
    assert 'data-module="system/wal.py"' in html and 'data-faults="kill"' in html
    assert "system/x.py:AddNot:0" in html and "boom" in html and "n only grows" in html


def test_faults_are_read_from_the_history(tmp_path: Path) -> None:
    lines = [{"index": 0, "time": 10, "process": 0, "type": "invoke", "f": "read"},
             {"index": 1, "time": 2_000_000_000, "process": "nemesis", "type": "invoke", "f": "start-kill"},
             {"index": 2, "time": 2_500_000_000, "process": "nemesis", "type": "info", "f": "start-kill",
              "value": {"killed": ["n2"]}},
             {"index": 3, "time": 3_000_000_000, "process": "nemesis", "type": "info", "f": "stop-kill"},
             {"index": 4, "time": 3_100_000_000, "process": 1, "type": "invoke", "f": "write"}]
    path = tmp_path / "history.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines) + '{"torn')
    facts = read_history(path)
    assert facts.client_ops == 2 and facts.faults == {"kill": 1} and facts.end_s == 3.1
    assert facts.events == [{"at_s": 2.5, "f": "start-kill", "value": {"killed": ["n2"]}}]
