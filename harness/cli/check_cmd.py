"""``fencepost check``: check recorded histories for linearizability.

One line per file (or, with ``--json``, one JSON object per file per line). The exit code is the
worst verdict: invalid 1, then unknown 2, then valid 0; a file that cannot be checked gives 3.
Without ``--model`` the model is picked by format, then by the functions present (see
:mod:`checkers.models`). Each format is checked with its own semantics (:mod:`harness.history.semantics`):
Jepsen's EDN as Knossos reads it, native JSONL strictly; ``--nil-read`` overrides what a nil read means.

A PATH may be a Jepsen run folder: its ``history.edn`` is checked (or a Fencepost run's
``history.jsonl``), and when ``results.edn`` lies beside the history, Jepsen's verdict is shown next to
Fencepost's (``jepsen`` in ``--json``), with a note when they disagree; so it is for any history file with a
``results.edn`` beside it.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from typing import Any

import click

from harness.cli.errors import fail
from harness.cli.exit_codes import ERROR, for_validity, worst

FORMATS = ["auto", "jsonl", "edn", "parquet", "porcupine-etcd", "porcupine-kv"]
MODELS = ["register", "cas-register", "etcd", "kv", "log", "set", "multi-register", "mutex"]


def _reports(paths: list[str], opts: Any, jobs: int | None, engine: str, spark_master: str | None) -> Iterator[Any]:
    """Reports in the order given: every file on the local engine (in parallel), unless the engine
    chosen for some file is Spark; then file by file, each on its own engine."""
    from checkers.linearizability.run import check_files

    if engine != "local":
        from checkers.spark.auto import check_path, choose_engine

        if any(choose_engine(p, engine) == "spark" for p in paths):
            for path in paths:
                yield check_path(path, opts, engine=engine, spark_master=spark_master)
            return
    for report in check_files(paths, opts, jobs):
        report.summary.setdefault("engine", "local")
        yield report


def _verdict_word(valid: Any) -> str:
    return {True: "valid", False: "INVALID"}.get(valid, "unknown") if valid is not None else "ERROR"


@click.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="auto", show_default=True,
              help="history format")
@click.option("--model", type=click.Choice(MODELS), default=None,
              help="model; default: by format (porcupine-etcd: etcd, porcupine-kv: kv), else by the fs present")
@click.option("--init", "init_json", default=None,
              help="initial value as JSON or EDN, e.g. 0 or '{:x 0 :y 0}' (default: absent / the model's)")
@click.option("--nil-read", type=click.Choice(["any", "absent"]), default=None,
              help="what an ok read of nil means: any (constrains nothing, Knossos) or absent; "
                   "default: any for EDN, absent otherwise")
@click.option("--timeout", type=float, default=None, help="seconds per file before the verdict is unknown")
@click.option("--no-partition", is_flag=True, help="check the whole history as one partition (benchmarks)")
@click.option("--all-violations", is_flag=True, help="keep checking partitions after the first violation")
@click.option("--json", "as_json", is_flag=True, help="one JSON object per file per line")
@click.option("--html", "html_dir", default=None, help="write an HTML timeline per invalid file into DIR")
@click.option("--explain", is_flag=True, help="print a plain-text counterexample under each invalid file")
@click.option("--jobs", type=int, default=None, help="processes for many files (default: all cores)")
@click.option("--engine", type=click.Choice(["auto", "local", "spark"]), default="auto", show_default=True,
              help="local processes, or Spark; auto picks Spark for histories of 1,000,000 events or more")
@click.option("--spark-master", default=None,
              help="Spark master URL (default: SPARK_REMOTE, then spark.master, then local[*])")
def check(paths: tuple[str, ...], fmt: str, model: str | None, init_json: str | None, nil_read: str | None,
          timeout: float | None, no_partition: bool, all_violations: bool, as_json: bool, html_dir: str | None,
          explain: bool, jobs: int | None, engine: str, spark_master: str | None) -> None:
    """Check the histories at PATHS (files, or Jepsen run folders) for linearizability."""
    from checkers.linearizability.run import FileOptions
    from harness.history import jepsen_store

    init = None
    if init_json is not None:
        init = _parse_init(init_json)
    files = [jepsen_store.find_history(p) or p if os.path.isdir(p) else p for p in paths]
    if timeout is not None and timeout <= 0:
        fail("--timeout must be positive")
    if html_dir is not None:
        os.makedirs(html_dir, exist_ok=True)
    opts = FileOptions(fmt=fmt, model=model, init=init, timeout=timeout, partition=not no_partition,
                       all_violations=all_violations, explain=as_json or explain or html_dir is not None,
                       nil_read=nil_read)
    codes: list[int] = []
    for report in _reports(files, opts, jobs, engine, spark_master):
        for warning in report.summary.get("warnings", []):
            click.echo(f"fencepost: warning: {warning}", err=True)
        if report.valid is None:
            codes.append(ERROR)
            for line in report.errors:
                click.echo(f"fencepost: error: {line}", err=True)
            if as_json:
                click.echo(json.dumps(report.summary))
            else:
                click.echo(f"{report.path}: ERROR {report.errors[0] if report.errors else ''}")
            continue
        codes.append(for_validity(report.valid))
        s = report.summary
        results = jepsen_store.results_beside(report.path)
        if results is not None:
            s["jepsen"] = jepsen_store.compare(report.valid, jepsen_store.jepsen_verdict(results))
        if as_json:
            click.echo(json.dumps(s, default=str))
        else:
            keys = f" invalid keys: {', '.join(map(repr, s['invalid_keys'][:5]))}" if s["invalid_keys"] else ""
            click.echo(f"{report.path}: {_verdict_word(report.valid)} (model {s['model']}, {s['ops']} ops, "
                       f"{s['partitions']} partition{'s' if s['partitions'] != 1 else ''}, "
                       f"{s['seconds']:.3f}s, engine {s.get('engine', 'local')}){keys}")
            if "jepsen" in s:
                click.echo(_jepsen_line(s["jepsen"]))
            if explain and report.counterexamples:
                from checkers.linearizability.explain import explain_all

                click.echo(explain_all(report.counterexamples))
        if html_dir is not None and report.valid is False:
            from checkers.linearizability.html import render_html

            out = os.path.join(html_dir, os.path.basename(report.path) + ".html")
            facts = {k: s[k] for k in ("valid", "model", "ops", "partitions", "invalid_keys")}
            with open(out, "w", encoding="utf-8") as fh:
                fh.write(render_html(report.path, report.counterexamples, facts))
    sys.stdout.flush()
    sys.exit(worst(codes))


def _parse_init(text: str) -> Any:
    """``--init`` as JSON, or else as EDN (``'{:x 0 :y 0}'``); a clear error when it is neither."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        json_error = e.msg
    from harness.history.edn_values import parse_value

    try:
        return parse_value(text)
    except ValueError as e:
        fail(f"--init is neither JSON ({json_error}) nor EDN ({e})")


def _jepsen_line(jepsen: dict[str, Any]) -> str:
    """Jepsen's verdict from ``results.edn``, in one line under Fencepost's."""
    if "error" in jepsen:
        return f"  jepsen: {jepsen['error']}"
    line = f"  jepsen {jepsen['results']}: valid? {jepsen['valid']}, linearizable {jepsen['linearizable']}"
    return line + (f"; {jepsen['note']}" if "note" in jepsen else "; agrees")
