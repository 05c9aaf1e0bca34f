"""Mutants reviewed as equivalent: the system's TOML file, kept in its repository.

Each entry names a mutant by id and says why no test can tell it from the original, with the line it
changes as it was reviewed, so an entry whose code has since changed is reported as stale instead of
silently covering a different mutation::

    [[mutant]]
    id = "system/rules.py:ReplaceComparisonOperator_Lt_NotEq:5"
    line = "while n < len(log_ids) and log_ids[n] <= point:"
    mutated = "while n != len(log_ids) and log_ids[n] <= point:"
    reason = "n counts up from 0 by one and stops at len(log_ids): < and != agree"

Equivalent mutants are not run, and count neither for nor against the score. A mutant is kept equivalent
only after review: an entry whose reason is missing, blank or still the placeholder :func:`entry_toml` writes
(``TODO: ...``) is refused, naming the file and the entry's line.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.mutation.mutants import Mutant

FIELDS = ("id", "line", "mutated", "reason")
PLACEHOLDER = "TODO: why no test can tell this mutant from the original"
"""The reason :func:`entry_toml` writes until a reviewer gives the real one; an entry still carrying it (any
reason that starts with ``TODO``) is not reviewed, and :func:`load` refuses it."""


@dataclass(frozen=True)
class Equivalent:
    """One reviewed entry: the mutant's id, its line before and after, and why it is equivalent."""

    id: str
    line: str
    mutated: str
    reason: str


@dataclass(frozen=True)
class Stale:
    """An entry that no longer matches the code, and why."""

    entry: Equivalent
    why: str


def load(path: Path | None) -> list[Equivalent]:
    """The entries of the file at ``path`` (none when it is None or does not exist).

    Raises:
        ValueError: the file is not valid TOML, or an entry lacks a field or a reviewed reason (the message
            names the file and the entry's line).
    """
    if path is None or not path.exists():
        return []
    text = path.read_text(encoding="utf-8")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"{path}: {e}") from None
    lines = entry_lines(text)
    entries = []
    for i, item in enumerate(data.get("mutant", [])):
        where = f"{path}:{lines[i]}" if i < len(lines) else str(path)
        missing = [f for f in FIELDS
                   if not isinstance(item.get(f), str) or (f in ("id", "reason") and not item[f].strip())]
        if missing:
            raise ValueError(f"{where}: entry {i + 1} ({item.get('id', '?')}) lacks {', '.join(missing)}")
        if item["reason"].strip().upper().startswith("TODO"):
            raise ValueError(f"{where}: entry {i + 1} ({item['id']}) has no reviewed reason (still "
                             f"{item['reason']!r}): say why no test can tell the mutant from the original, or "
                             f"remove the entry")
        entries.append(Equivalent(item["id"], item["line"].strip(), item["mutated"].strip(), item["reason"].strip()))
    return entries


def entry_lines(text: str) -> list[int]:
    """The line number (from 1) of each ``[[mutant]]`` header in the file's ``text``, in order."""
    return [n for n, line in enumerate(text.splitlines(), 1) if line.strip().replace(" ", "") == "[[mutant]]"]


def review(entries: Sequence[Equivalent], mutants: Sequence[Mutant]) -> tuple[dict[str, Equivalent], list[Stale]]:
    """Match the entries against the mutants of the code as it is now.

    Returns:
        ``({mutant id: entry}, stale entries)``: an entry is stale when no mutant has its id any more,
        or when that mutant's line, before or after, differs from the entry's.
    """
    by_id = {m.id: m for m in mutants}
    equivalent: dict[str, Equivalent] = {}
    stale = []
    for e in entries:
        m = by_id.get(e.id)
        if m is None:
            stale.append(Stale(e, "no such mutant in the code now"))
        elif (m.original, m.mutated) != (e.line, e.mutated):
            stale.append(Stale(e, f"the code changed: the mutant now turns `{m.original}` into `{m.mutated}`"))
        else:
            equivalent[e.id] = e
    return equivalent, stale


def entry_toml(mutant: Mutant, reason: str = PLACEHOLDER) -> str:
    """The file entry that would mark ``mutant`` equivalent, for a reviewer to paste once the reason is theirs
    (:func:`load` refuses the placeholder)."""
    fields = {"id": mutant.id, "line": mutant.original, "mutated": mutant.mutated, "reason": reason}
    return "[[mutant]]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in fields.items())
