"""Jepsen EDN histories: a ``[...]`` or ``(...)`` of op maps, or one map per line; ``;`` comments allowed.

Parsing uses the ``edn-format`` library. To report problems by line, the file is first split into its
top-level maps by a small scanner that tracks strings, comments and nesting; each map is then parsed
on its own, so one bad map does not hide the rest.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from harness.history.errors import Problem
from harness.history.op import Op
from harness.history.records import RecordError, op_from_record


def _split_forms(text: str) -> Iterator[tuple[int, str | None, str]]:
    """Yield ``(line, form text or None, error)`` for each top-level map in ``text``.

    A single enclosing ``[`` or ``(`` is unwrapped. Anything that is not a map at op level yields an
    error instead of a form.
    """
    closers = {"[": "]", "(": ")", "{": "}"}
    n, i, line = len(text), 0, 1
    stack: list[str] = []
    opened_at: list[int] = []
    op_level = 0  # stack depth at which op maps stand: 1 inside a wrapper, else 0
    wrapper_state = "none"  # none | open | closed
    start, start_line = -1, 0
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
        elif c == ";":
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        elif c == '"':
            string_line = line
            j = i + 1
            while j < n and text[j] != '"':
                if text[j] == "\\":
                    j += 1
                elif text[j] == "\n":
                    line += 1
                j += 1
            if j >= n:
                yield string_line, None, "unterminated string"
                return
            i = j + 1
            continue
        elif c == "\\":
            i += 2
            continue
        elif c in "[({":
            if not stack and wrapper_state == "none" and c in "[(":
                wrapper_state, op_level = "open", 1
            elif len(stack) == op_level:
                if c != "{" or wrapper_state == "closed":
                    where = "after the closing bracket" if wrapper_state == "closed" else "at op level"
                    yield line, None, f"expected an op map, found {c!r} {where}"
                    return
                start, start_line = i, line
            stack.append(c)
            opened_at.append(line)
        elif c in "])}":
            if not stack or closers[stack[-1]] != c:
                yield line, None, f"unbalanced {c!r}"
                return
            stack.pop()
            opened_at.pop()
            if start >= 0 and len(stack) == op_level:
                yield start_line, text[start : i + 1], ""
                start = -1
            elif wrapper_state == "open" and not stack:
                wrapper_state, op_level = "closed", 0
        elif not c.isspace() and c != "," and len(stack) == op_level:
            j = i
            while j < n and not text[j].isspace() and text[j] not in "[](){},;":
                j += 1
            yield line, None, f"expected an op map, found {text[i:j]!r}"
            i = j
            continue
        i += 1
    if stack:
        yield opened_at[-1], None, f"unclosed {stack[-1]!r} at end of file"


def _edn() -> Any:
    """The edn-format module, imported on first use (it costs ~80 ms to import)."""
    import edn_format

    return edn_format


def plain(value: Any) -> Any:
    """Convert edn-format values to plain Python: keywords to their names, vectors and lists to lists."""
    edn_format = _edn()
    if isinstance(value, edn_format.Keyword):
        return value.name
    if isinstance(value, edn_format.Symbol):
        return value.name
    if isinstance(value, (str, bytes, int, float)) or value is None:
        return value
    if isinstance(value, Mapping):
        return {plain(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, edn_format.ImmutableList)):
        return [plain(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((plain(v) for v in value), key=repr)
    return value


def read_edn(path: str | Path) -> Iterator[tuple[int, Op | Problem]]:
    """Yield ``(line number, op or problem)`` for each op map in a Jepsen EDN file."""
    name = str(path)
    edn_format = _edn()
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        yield 1, Problem(name, 1, f"not UTF-8 text: {e.reason}")
        return
    position = 0
    for line, form, error in _split_forms(text):
        if form is None:
            yield line, Problem(name, line, error)
            continue
        try:
            record = plain(edn_format.loads(form))
        except Exception as e:  # edn-format raises several exception types
            yield line, Problem(name, line, f"unparseable EDN: {e}")
            continue
        try:
            op = op_from_record(record, position)
        except RecordError as e:
            yield line, Problem(name, line, str(e))
            continue
        position += 1
        yield line, op


def _edn_value(value: Any, *, keyword: bool = False) -> Any:
    edn_format = _edn()
    if keyword and isinstance(value, str):
        return edn_format.Keyword(value)
    if isinstance(value, dict):
        return edn_format.ImmutableDict({_edn_value(k): _edn_value(v) for k, v in value.items()})
    if isinstance(value, list):
        return edn_format.ImmutableList([_edn_value(v) for v in value])
    return value


def op_to_edn(op: Op) -> str:
    """One op as a Jepsen EDN map: ``type``, ``f`` and field names as keywords."""
    edn_format = _edn()
    fields = op.to_dict()
    parts = []
    for k, v in fields.items():
        as_keyword = k in ("type", "f") or (k == "process" and isinstance(v, str))
        parts.append(f":{k} {edn_format.dumps(_edn_value(v, keyword=as_keyword))}")
    return "{" + ", ".join(parts) + "}"


def write_edn(ops: Iterable[Op], path: str | Path) -> None:
    """Write ops as an EDN vector, one map per line."""
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("[\n")
        for op in ops:
            fh.write(op_to_edn(op) + "\n")
        fh.write("]\n")
