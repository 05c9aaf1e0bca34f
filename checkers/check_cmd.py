"""``fencepost check``: check recorded histories for linearizability, or, with ``--model list-append`` or
``--model rw-register``, for the isolation anomalies of transactional histories (:mod:`checkers.txn.cli`).

One line per file (or, with ``--json``, one JSON object per decided partition as soon as it is decided,
``"event": "partition"``, and one per file, ``"event": "file"``). The exit code is the
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
from harness.history.formats import FORMATS

TXN_MODELS = ("list-append", "rw-register")


def _reports(paths: list[str], opts: Any, jobs: int | None, engine: str, spark_master: str | None,
             events: Any = None) -> Iterator[Any]:
    """Reports in the order given: every file on the local engine (in parallel), unless the engine
    chosen for some file is Spark; then file by file, each on its own engine."""
    from checkers.linearizability.run import check_files

    if engine != "local":
        from checkers.spark.auto import check_path, choose_engine

        if any(choose_engine(p, engine) == "spark" for p in paths):
            for path in paths:
                yield check_path(path, opts, engine=engine, spark_master=spark_master)
            return
    for report in check_files(paths, opts, jobs, events):
        report.summary.setdefault("engine", "local")
        yield report


def _verdict_word(valid: Any) -> str:
    return {True: "valid", False: "INVALID"}.get(valid, "unknown") if valid is not None else "ERROR"


@click.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="auto", show_default=True,
              help="history format")
@click.option("--model", default=None,
              help="register, cas-register, etcd, kv, log, set, multi-register, mutex, or an installed model "
                   "(fencepost.models); list-append or rw-register for transactional histories; default: by "
                   "format (porcupine-etcd: etcd, porcupine-kv: kv), else by the fs present")
@click.option("--consistency", "consistency", multiple=True,
              help="with --model list-append|rw-register: a consistency model to check (Elle's names, e.g. "
                   "serializable, snapshot-isolation, read-committed); repeat it or separate with commas "
                   "[default: strict-serializable]")
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
@click.option("--witness", "witness_dir", default=None,
              help="write a 1-minimal failing sub-history per invalid partition into DIR as JSONL "
                   "(<file>.<key>.witness.jsonl); --explain and --html show it first")
@click.option("--max-memory", default=None,
              help="memory the search may use, e.g. 1G or 512M; a partition past it is unknown "
                   "(default: half the machine's memory)")
@click.option("--plan", "show_plan", is_flag=True,
              help="print every file's partitions, concurrency, info ops and difficulty estimate first "
                   "(files estimated at 5 s or more always get it)")
@click.option("--progress/--no-progress", default=None,
              help="a progress bar on stderr (default: when stderr is a terminal)")
@click.option("--no-split", is_flag=True,
              help="search a partition's keys together, not apart (benchmarks; with --no-partition: the raw search)")
def check(paths: tuple[str, ...], fmt: str, model: str | None, consistency: tuple[str, ...], init_json: str | None,
          nil_read: str | None,
          timeout: float | None, no_partition: bool, all_violations: bool, as_json: bool, html_dir: str | None,
          explain: bool, jobs: int | None, engine: str, spark_master: str | None, witness_dir: str | None,
          max_memory: str | None, show_plan: bool, progress: bool | None, no_split: bool) -> None:
    """Check the histories at PATHS (files, or Jepsen run folders) for linearizability, or for isolation
    anomalies (--model list-append|rw-register)."""
    from checkers.linearizability.run import FileOptions
    from checkers.models import available_models
    from harness.history import jepsen_store

    if model in TXN_MODELS:
        _check_txn(paths, fmt, model, consistency, as_json=as_json, explain=explain, witness_dir=witness_dir,
                   html_dir=html_dir)
    if consistency:
        fail("--consistency applies to --model list-append or rw-register")
    if model is not None and model not in available_models():
        fail(f"unknown model {model!r}; choose one of {', '.join(sorted(available_models()))}")
    init = None
    if init_json is not None:
        init = _parse_init(init_json)
    files = [jepsen_store.find_history(p) or p if os.path.isdir(p) else p for p in paths]
    if timeout is not None and timeout <= 0:
        fail("--timeout must be positive")
    if html_dir is not None:
        os.makedirs(html_dir, exist_ok=True)
    memory = _max_memory(max_memory)
    if witness_dir is not None:
        os.makedirs(witness_dir, exist_ok=True)
    wants_witness = witness_dir is not None or explain or html_dir is not None
    opts = FileOptions(fmt=fmt, model=model, init=init, timeout=timeout, partition=not no_partition,
                       all_violations=all_violations, explain=as_json or wants_witness, nil_read=nil_read,
                       split=not no_split, max_memory=memory, witness=wants_witness)
    from checkers.linearizability.progress import ConsoleEvents

    events = ConsoleEvents(stream_json=as_json, plans=True if show_plan else None,
                           progress=sys.stderr.isatty() if progress is None else progress)
    try:
        codes = _report_all(files, opts, jobs, engine, spark_master, events, as_json=as_json, explain=explain,
                            html_dir=html_dir, witness_dir=witness_dir)
    finally:
        events.close()
    sys.stdout.flush()
    sys.exit(worst(codes))


def _check_txn(paths: tuple[str, ...], fmt: str, model: str, consistency: tuple[str, ...], *, as_json: bool,
               explain: bool, witness_dir: str | None, html_dir: str | None) -> None:
    """The transactional path: every file checked against the consistency models; exits with the worst code."""
    from checkers.txn.checker import parse_models
    from checkers.txn.cli import check_paths
    from checkers.txn.models import UnknownModel
    from harness.history import jepsen_store

    try:
        models = parse_models(list(consistency) or None)
    except UnknownModel as e:
        fail(str(e))
    files = [jepsen_store.find_history(p) or p if os.path.isdir(p) else p for p in paths]
    codes = check_paths(files, fmt, model, models, as_json=as_json, explain=explain, witness_dir=witness_dir,
                        html_dir=html_dir)
    sys.stdout.flush()
    sys.exit(worst(codes))


def _recheck(summary: dict[str, Any], opts: Any) -> str:
    """The command that checks a witness file with the model and semantics the file was checked with."""
    line = f"fencepost check --model {summary['model']}"
    if summary.get("semantics", {}).get("nil_read", "absent") != "absent":
        line += f" --nil-read {summary['semantics']['nil_read']}"
    if opts.init is not None:
        line += f" --init '{json.dumps(opts.init, default=str)}'"
    return line


def _max_memory(text: str | None) -> int | None:
    """``--max-memory`` in bytes (None: the default share); a bad size is one clear error, exit 3."""
    if text is None:
        return None
    from checkers.linearizability.memory import parse_size

    try:
        return parse_size(text)
    except ValueError as e:
        fail(f"--max-memory: {e}")


def _report_all(files: list[str], opts: Any, jobs: int | None, engine: str, spark_master: str | None, events: Any,
                *, as_json: bool, explain: bool, html_dir: str | None, witness_dir: str | None) -> list[int]:
    """Print each file's report as it comes; the exit codes."""
    from harness.history import jepsen_store

    codes: list[int] = []
    for report in _reports(files, opts, jobs, engine, spark_master, events):
        for warning in report.summary.get("warnings", []):
            click.echo(f"fencepost: warning: {warning}", err=True)
        if report.valid is None:
            codes.append(ERROR)
            for line in report.errors:
                click.echo(f"fencepost: error: {line}", err=True)
            if as_json:
                click.echo(json.dumps({"event": "file", **report.summary}))
            else:
                click.echo(f"{report.path}: ERROR {report.errors[0] if report.errors else ''}")
            continue
        codes.append(for_validity(report.valid))
        s = report.summary
        results = jepsen_store.results_beside(report.path)
        if results is not None:
            s["jepsen"] = jepsen_store.compare(report.valid, jepsen_store.jepsen_verdict(results))
        if witness_dir is not None and report.witnesses:
            from checkers.linearizability.witness_io import write_witness

            s["witness_files"] = [write_witness(witness_dir, report.path, w) for w in report.witnesses]
        if as_json:
            click.echo(json.dumps({"event": "file", **s}, default=str))
        else:
            named = [k for k in s["invalid_keys"] if k is not None]  # an unkeyed history's one partition has none
            keys = f" invalid keys: {', '.join(map(repr, named[:5]))}" if named else ""
            if s.get("unknown_reasons"):
                keys += f" unknown: {s['unknown_reasons'][0]}"
            click.echo(f"{report.path}: {_verdict_word(report.valid)} (model {s['model']}, {s['ops']} ops, "
                       f"{s['partitions']} partition{'s' if s['partitions'] != 1 else ''}, "
                       f"{s['seconds']:.3f}s, engine {s.get('engine', 'local')}){keys}")
            if "jepsen" in s:
                click.echo(_jepsen_line(s["jepsen"]))
            if explain and report.counterexamples:
                from checkers.linearizability.explain import explain_all

                click.echo(explain_all(report.counterexamples, witnesses=report.witnesses, recheck=_recheck(s, opts)))
            for written in s.get("witness_files", []):
                click.echo(f"  witness: {written}")
        if html_dir is not None and report.valid is False:
            from checkers.linearizability.html import render_html

            out = os.path.join(html_dir, os.path.basename(report.path) + ".html")
            facts = {k: s[k] for k in ("valid", "model", "ops", "partitions", "invalid_keys")}
            with open(out, "w", encoding="utf-8") as fh:
                fh.write(render_html(report.path, report.counterexamples, facts, report.witnesses))
    return codes


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
