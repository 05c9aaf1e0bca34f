"""``fencepost check --model list-append|rw-register``: transactional histories checked file by file.

One line per file (or, with ``--json``, one JSON object per file); ``--explain`` prints each anomaly's
explanation under its file, ``--witness DIR`` writes each anomaly as a small history that fails again, ``--html
DIR`` draws a page per invalid file with the installed ``fencepost.txn_pages`` writer. Exit codes: the worst of
0 valid, 1 invalid, 2 unknown, 3 a file that cannot be checked (one line names it: ``FILE:LINE: what is wrong``).
"""

from __future__ import annotations

import json
import os
from array import array
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from checkers.txn.checker import check_txn
from checkers.txn.errors import MalformedTxn
from checkers.txn.explain import render_text
from checkers.txn.models import UnknownModel
from harness.cli.exit_codes import ERROR, for_validity
from harness.history.errors import HistoryError, Problem
from harness.history.op import Op


def load(path: str, fmt: str, warnings: list[Problem]) -> tuple[list[Op], array]:
    """The history and each op's line (``harness.history`` reads and validates it)."""
    from harness.history.formats import load_history

    lines: array = array("q")
    ops = load_history(path, fmt, warnings=warnings, line_numbers=lines)
    return ops, lines


def check_paths(paths: Sequence[str], fmt: str, workload: str, consistency: Sequence[str], *, as_json: bool,
                explain: bool, witness_dir: str | None, html_dir: str | None) -> list[int]:
    """Check each file; print its verdict; return the exit codes."""
    codes = []
    for path in paths:
        codes.append(_check_one(path, fmt, workload, consistency, as_json=as_json, explain=explain,
                                witness_dir=witness_dir, html_dir=html_dir))
    return codes


def _error(path: str, message: str, as_json: bool) -> int:
    click.echo(f"fencepost: error: {message}", err=True)
    if as_json:
        click.echo(json.dumps({"event": "file", "path": path, "valid": None, "error": message}))
    return ERROR


def _check_one(path: str, fmt: str, workload: str, consistency: Sequence[str], *, as_json: bool, explain: bool,
               witness_dir: str | None, html_dir: str | None) -> int:
    warnings: list[Problem] = []
    try:
        ops, lines = load(path, fmt, warnings)
    except HistoryError as e:
        for problem in e.problems[1:]:
            click.echo(f"fencepost: error: {problem}", err=True)
        return _error(path, str(e.problems[0]) if e.problems else f"{path}: unreadable", as_json)
    for warning in warnings:
        click.echo(f"fencepost: warning: {warning}", err=True)
    try:
        result = check_txn(ops, workload, consistency, source=path, lines=lines)
    except MalformedTxn as e:
        return _error(path, e.where(path), as_json)
    except UnknownModel as e:
        return _error(path, str(e), as_json)
    result["path"] = path
    if witness_dir is not None and result["anomalies"]:
        from checkers.txn.witness import write_witness

        written = write_witness(result, ops, witness_dir, Path(path).name)
        result["witness_files"] = [str(p) for p in written]
        result["recheck"] = (f"fencepost check --model {workload} --consistency {','.join(result['consistency'])} "
                             "WITNESS")
    if html_dir is not None and result["valid"] is not True:
        page = _html(result, ops, path, html_dir)
        if page is not None:
            result["html"] = page
    if as_json:
        click.echo(json.dumps({"event": "file", **result}, default=str))
    else:
        click.echo(summary_line(path, result))
        if explain and result["anomaly_types"]:
            click.echo(render_text(result))
        for written_path in result.get("witness_files", []):
            click.echo(f"  witness: {written_path}")
        if result.get("html"):
            click.echo(f"  html: {result['html']}")
    return for_validity(result["valid"])


def summary_line(path: str, result: dict[str, Any]) -> str:
    """``FILE: INVALID (list-append, strict-serializable, 1000 txns, 0.52s) G-single (2), G1a (1); ...``."""
    word = {True: "valid", False: "INVALID"}.get(result["valid"], "unknown")
    line = (f"{path}: {word} ({result['workload']}, {', '.join(result['consistency'])}, {result['txns']} txns, "
            f"{result['seconds']:.3f}s)")
    counts = result.get("counts", {})
    if result["prohibited"]:
        line += " " + ", ".join(f"{t} ({counts.get(t, 1)})" for t in result["prohibited"])
    if result["also_seen"]:
        line += ("; " if result["prohibited"] else " ") + "also seen: " + ", ".join(result["also_seen"])
    for reason in result.get("unknown_reasons", []):
        line += f"; {reason}"
    return line


def _html(result: dict[str, Any], ops: list[Op], path: str, html_dir: str) -> str | None:
    from harness import registry

    writers = registry.group("fencepost.txn_pages")
    if not writers:
        click.echo("fencepost: warning: no transactional page writer is installed (fencepost.txn_pages)", err=True)
        return None
    os.makedirs(html_dir, exist_ok=True)
    out = Path(html_dir) / (Path(path).name + ".html")
    writer = next(iter(writers.values())).load()
    return str(writer(result, out, source=path, history=ops))
