"""Results pages for the documentation site: a command's final JSON, with where and when it was measured.

Figures in the documentation are generated, never typed in. A command that ends with one JSON object
(``fencepost matrix``'s ``{"matrix": [...], "passed": ...}``, ``fencepost mutate``'s summary, a bench's
figures) hands that object to :func:`write_results_page`, which writes it as a Markdown page into a folder
of the site (``docs/results/matrix-reference.md``, say), with its provenance: the UTC date, the commit and
whether the working tree had changes, the machine, the seeds and the command line. The folder's
``index.md`` is then rewritten to list every page in it, newest first.

The page is generic: each top-level scalar goes into a summary table; each top-level list of objects
becomes a table of its own (one row per object, one column per field); a mapping of mappings becomes a
table with one row per key; anything else is shown as JSON. The whole payload follows as JSON, so the
page holds everything the command printed.

Registered under the ``fencepost.results_pages`` entry-point group, so that commands in lower layers
(``fencepost matrix --results-page DIR``) reach it without importing ``reports``.
"""

from __future__ import annotations

import json
import os
import platform
import shlex
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

INDEX = "index.md"
REPO = Path(__file__).resolve().parents[1]
"""Fencepost's source tree: the commit recorded is the one its code came from."""
INDEX_INTRO = """\
# Results

Every page here was generated from a command's final JSON output by `reports/results_page.py`
(`fencepost matrix --results-page docs/results`, for one), never typed in. Each names the commit it
was measured on (and whether the working tree had uncommitted changes), the machine, the seeds and the
command line, so any figure can be measured again.
"""


@dataclass(frozen=True)
class Provenance:
    """Where, when and how a result was measured.

    Attributes:
        date: UTC, ``YYYY-MM-DD HH:MM:SS UTC``.
        commit: ``git rev-parse HEAD`` of Fencepost's source tree, or None outside a git checkout.
        dirty: the tree had uncommitted changes to tracked files (None when unknown).
        machine: ``uname -m``.
        cpus: logical CPUs.
        os: the operating system (its release name where known) and kernel.
        seeds: the seeds the command ran.
        command: the command line.
    """

    date: str
    commit: str | None
    dirty: bool | None
    machine: str
    cpus: int
    os: str
    seeds: tuple[int, ...]
    command: str

    def rows(self) -> list[tuple[str, str]]:
        """The provenance as (field, value) rows for a table."""
        commit = "unknown (not a git checkout)" if self.commit is None else f"`{self.commit}`"
        if self.dirty:
            commit += " with uncommitted changes"
        return [("date", self.date), ("commit", commit), ("machine", f"{self.machine}, {self.cpus} CPUs"),
                ("OS", self.os), ("seeds", _seeds_text(self.seeds)), ("command", f"`{self.command}`")]


def _git(repo: Path, *args: str) -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=30,
                             check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout if out.returncode == 0 else None


def _os_name() -> str:
    try:
        name = platform.freedesktop_os_release().get("PRETTY_NAME", "")
    except OSError:
        name = ""
    kernel = f"{platform.system()} {platform.release()}"
    return f"{name} ({kernel})" if name else kernel


def collect_provenance(*, seeds: Sequence[int] = (), command: str | Sequence[str] = "",
                       repo: Path = REPO, now: datetime | None = None) -> Provenance:
    """The provenance of a result measured now, on this machine, from the source tree at ``repo``.

    Args:
        seeds: the seeds the command ran.
        command: the command line, as a string or as its arguments.
        repo: the source tree whose commit is recorded (default: the one this module was loaded from).
        now: the time to record (default: now).
    """
    head = _git(repo, "rev-parse", "HEAD")
    status = _git(repo, "status", "--porcelain", "--untracked-files=no") if head is not None else None
    line = command if isinstance(command, str) else shlex.join(command)
    return Provenance(date=(now or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M:%S UTC"),
                      commit=head.strip() if head is not None else None,
                      dirty=None if status is None else bool(status.strip()),
                      machine=platform.machine(), cpus=os.cpu_count() or 1, os=_os_name(),
                      seeds=tuple(seeds), command=line)


def _seeds_text(seeds: Sequence[int]) -> str:
    if not seeds:
        return "-"
    ordered = sorted(seeds)
    if len(ordered) > 2 and ordered == list(range(ordered[0], ordered[-1] + 1)):
        return f"{ordered[0]}-{ordered[-1]}"
    return ", ".join(map(str, ordered))


def _cell(value: Any) -> str:
    """A value as the text of one table cell."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        text = f"{value:g}"
    elif isinstance(value, Mapping):
        text = ", ".join(f"{k} ({_cell(v)})" for k, v in value.items()) or "-"
    elif isinstance(value, list | tuple):
        text = ", ".join(_cell(v) for v in value) or "-"
    else:
        text = str(value)
    return text.replace("|", "\\|").replace("\n", " ")


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    lines = ["| " + " | ".join(_cell(h) for h in header) + " |", "|" + " --- |" * len(header)]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return lines


def _columns(records: Sequence[Mapping[str, Any]]) -> list[str]:
    seen: dict[str, None] = {}
    for record in records:
        seen.update(dict.fromkeys(record))
    return list(seen)


def _section(key: str, value: Any) -> list[str] | None:
    """The table for one non-scalar top-level value, or None when it is a scalar."""
    if value is None or isinstance(value, bool | int | float | str):
        return None
    if isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
        cols = _columns(value)
        return _table(cols, [[record.get(c) for c in cols] for record in value])
    if isinstance(value, Mapping) and value and all(isinstance(v, Mapping) for v in value.values()):
        cols = _columns(list(value.values()))
        return _table(["", *cols], [[k, *(v.get(c) for c in cols)] for k, v in value.items()])
    if isinstance(value, Mapping):
        return _table(["field", "value"], list(value.items()))
    return ["```json", json.dumps(value, indent=1, default=str), "```"]


def render_results_page(payload: Mapping[str, Any], provenance: Provenance, *, title: str) -> str:
    """The Markdown page for ``payload`` (a command's final JSON object), measured as ``provenance`` says.

    The page starts with front matter (``title``, ``date``, ``commit``) that :func:`update_index` reads.
    """
    lines = ["---", f"title: {json.dumps(title)}", f"date: {json.dumps(provenance.date)}",
             f"commit: {json.dumps(provenance.commit or '')}", "---", "", f"# {title}", "",
             "Generated by `reports/results_page.py` from the command's final JSON output; not edited by hand.",
             "", "## Provenance", "", *_table(["", ""], provenance.rows()), ""]
    scalars = [(k, v) for k, v in payload.items() if _section(k, v) is None]
    if scalars:
        lines += ["## Summary", "", *_table(["", ""], scalars), ""]
    for key, value in payload.items():
        section = _section(key, value)
        if section is not None:
            lines += [f"## {key}", "", *section, ""]
    lines += ["## Payload", "", "```json", json.dumps(payload, indent=1, sort_keys=True, default=str), "```", ""]
    return "\n".join(lines)


def _front_matter(path: Path) -> dict[str, str]:
    """A generated page's front matter (title, date, commit); empty when it has none."""
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines or lines[0] != "---":
        return {}
    out: dict[str, str] = {}
    for line in lines[1:]:
        if line == "---":
            break
        key, _, value = line.partition(": ")
        try:
            out[key] = str(json.loads(value))
        except json.JSONDecodeError:
            out[key] = value
    return out


def update_index(out_dir: str | Path) -> Path:
    """Rewrite ``out_dir/index.md`` to list every generated page in ``out_dir``, newest first; its path."""
    folder = Path(out_dir)
    pages = [(p, _front_matter(p)) for p in sorted(folder.glob("*.md")) if p.name != INDEX]
    pages = [(p, meta) for p, meta in pages if meta]
    pages.sort(key=lambda pm: pm[1].get("date", ""), reverse=True)
    lines = [INDEX_INTRO]
    if pages:
        lines += _table(["page", "measured", "commit"],
                        [[f"[{meta.get('title', p.stem)}]({p.name})", meta.get("date"),
                          f"`{meta['commit'][:12]}`" if meta.get("commit") else None] for p, meta in pages])
    else:
        lines.append("No results have been generated here yet.")
    index = folder / INDEX
    index.write_text("\n".join(lines).rstrip("\n") + "\n", encoding="utf-8")
    return index


def write_results_page(payload: Mapping[str, Any], out_dir: str | Path, *, name: str, title: str | None = None,
                       seeds: Sequence[int] = (), command: str | Sequence[str] = "",
                       provenance: Provenance | None = None) -> Path:
    """Write ``payload`` as the page ``out_dir/<name>.md`` and list it in ``out_dir/index.md``.

    Args:
        payload: the command's final JSON object (``fencepost matrix``: ``{"matrix": [...], "passed": ...}``;
            ``fencepost mutate``: its summary).
        out_dir: the folder of results pages (``docs/results``); created if missing.
        name: the page's file name without ``.md`` (``matrix-reference``); a later page of the same name
            replaces it.
        title: the page's title (default: ``name``).
        seeds: the seeds the command ran.
        command: the command line, as a string or as its arguments.
        provenance: where and when it was measured (default: :func:`collect_provenance` now, here).

    Returns:
        The page's path.

    Raises:
        ValueError: ``name`` is not a plain file name.
    """
    if not name or name != Path(name).name or name.startswith("."):
        raise ValueError(f"a results page's name must be a plain file name, got {name!r}")
    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    prov = provenance or collect_provenance(seeds=seeds, command=command)
    page = folder / f"{name}.md"
    page.write_text(render_results_page(payload, prov, title=title or name), encoding="utf-8")
    update_index(folder)
    return page
