"""``fencepost recheck RUN_DIR``: judge a stored run again with today's checkers, and render its report again.

A run folder holds everything its checkers read (test.json, history.jsonl, the nodes' logs and dumps), so a
checker fixed or added since can judge an old run without running it again. The run's earlier verdict is
kept beside the new one (``results.<time>.json``), never overwritten.
"""

from __future__ import annotations

import datetime as dt
import shutil
import sys
from pathlib import Path

import click

from harness.cli.errors import fail
from harness.cli.exit_codes import for_validity
from harness.cli.test_cmd import VERDICT_WORDS, print_failing


@click.command()
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path(file_okay=False, path_type=Path))
def recheck(run_dirs: tuple[Path, ...]) -> None:
    """Judge stored runs again with today's checkers and render their reports again. Exits 0/1/2/3 (the worst
    verdict among the runs)."""
    from harness import registry
    from harness.after_run import check_run, checkers_for, render_report
    from harness.checker_protocol import merge_validity
    from harness.config import TestConfig
    from harness.history.errors import HistoryError
    from harness.store import RunDir

    verdicts = []
    for path in run_dirs:
        run = RunDir(path)
        if not run.test_json.is_file() or not run.history_path.is_file():
            fail(f"{path}: not a run folder (it needs test.json and history.jsonl)")
        try:
            test = run.read_config()
            config = TestConfig.from_dict(test)
            system = registry.load_system(config.system)
            checkers = checkers_for(registry.load_workload(config.workload, config), system, config)
            history = run.read_history()
        except registry.Refused as e:
            fail(f"{path}: {e}")
        except HistoryError as e:
            fail(f"{path}: {e}")
        except ValueError as e:  # a test.json this version cannot read
            fail(f"{path}: {run.test_json}: {e}")
        before = run.read_results()
        if before is not None:
            stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S.%fZ")
            shutil.copy2(run.results_json, run.path / f"results.{stamp}.json")
        results = check_run(run, checkers, history, test, system=system)
        report = render_report(run)
        was = f" (was {VERDICT_WORDS.get(before.get('valid'), 'UNKNOWN')})" if before is not None else ""
        click.echo(f"{VERDICT_WORDS.get(results['valid'], 'UNKNOWN')}  {path}{was}")
        print_failing(results)
        click.echo(f"report: {report if report else run.results_json}")
        verdicts.append(results["valid"])
    sys.exit(for_validity(merge_validity(verdicts)))
