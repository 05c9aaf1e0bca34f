"""Jepsen EDN histories: a ``[...]`` or ``(...)`` of op maps, or one map per line; ``;`` comments allowed.

A transaction (``:f :txn``, or no ``:f`` and a value of micro-ops, as in Elle's own histories) keeps its
micro-ops as lists, each function a plain string (``[:append 3 1]`` reads as ``["append", 3, 1]``; ``nil``
reads as None; :mod:`harness.history.micro_ops`).

An op may be a tagged record, as Jepsen 0.3 prints its ops (``#jepsen.history.Op{:index 0, ...}``);
``jepsen.independent`` tuples become keys (:mod:`harness.history.independent`). Keywords and sets are
remembered (:mod:`harness.history.edn_values`), so that writing a history back gives the EDN Jepsen
wrote: keywords, tuples, ``:index``, ``:time`` and ``:process :nemesis``.

Parsing uses the ``edn-format`` library. To report problems by line, the file is first split into its
top-level maps by a small scanner that tracks strings, comments and nesting; each map is then parsed
on its own, so one bad map does not hide the rest.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from harness.history.edn_values import Keyword, allow_tags, plain, to_edn
from harness.history.errors import Problem
from harness.history.independent import KEY_NIL, TUPLES, edn_mode, split_tuples
from harness.history.micro_ops import TXN, looks_like_txn, plain_function_names
from harness.history.op import NEMESIS, Op
from harness.history.records import RecordError, op_from_record

__all__ = ["op_to_edn", "plain", "read_edn", "write_edn"]


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
        elif c == "#" and len(stack) == op_level and wrapper_state != "closed":
            m = _RECORD_TAG.match(text, i)
            if m is None:
                j = i
                while j < n and not text[j].isspace() and text[j] not in "[](){},;":
                    j += 1
                yield line, None, f"expected an op map, found {text[i:j] or c!r}"
                return
            # A record such as #jepsen.history.Op{...}: the map after the tag is the op.
            i = m.end()
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


_RECORD_TAG = re.compile(r"#[A-Za-z][\w.*+!?$%&=<>-]*(?:/[\w.*+!?$%&=<>-]+)?[ \t]*(?=\{)")
"""A record's tag, such as ``#jepsen.history.Op``, right before its map."""


def _edn() -> Any:
    """The edn-format module, imported on first use (it costs ~80 ms to import)."""
    import edn_format

    return edn_format


def _parse_together(forms: list[str | None]) -> list[Any] | None:
    """Every form parsed in one edn-format call (several times faster than one call per form, which
    builds edn-format's lexer each time); None when some form is missing or does not parse, and each is
    then parsed on its own so that the bad one is named by its line."""
    texts = [form for form in forms if form is not None]
    if not texts or len(texts) != len(forms):
        return None
    try:
        values = _edn().loads("[" + "\n".join(texts) + "]")
    except Exception:  # edn-format raises several exception types
        return None
    return list(values) if len(values) == len(texts) else None


def read_edn(path: str | Path) -> Iterator[tuple[int, Op | Problem]]:
    """Yield ``(line number, op or problem)`` for each op map in a Jepsen EDN file.

    ``jepsen.independent`` tuples are unwrapped into keys once the whole file has been read.
    """
    name = str(path)
    edn_format = _edn()
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        yield 1, Problem(name, 1, f"not UTF-8 text: {e.reason}")
        return
    if "#" in text:
        allow_tags(text)
    forms = list(_split_forms(text))
    parsed = _parse_together([form for _, form, _ in forms])
    items: list[tuple[int, Op | Problem]] = []
    records: dict[int, dict[str, Any]] = {}
    position = 0
    for k, (line, form, error) in enumerate(forms):
        if form is None:
            items.append((line, Problem(name, line, error)))
            continue
        try:
            record = plain(parsed[k] if parsed is not None else edn_format.loads(form))
        except Exception as e:  # edn-format raises several exception types
            items.append((line, Problem(name, line, f"unparseable EDN: {e}")))
            continue
        if isinstance(record, dict):
            record = {str(k): v for k, v in record.items()}
            for field in ("type", "f", "process"):
                if type(record.get(field)) is Keyword:
                    record[field] = str(record[field])
            if "f" not in record and looks_like_txn(record.get("value")):
                record["f"] = TXN  # Elle's own histories leave :f out of transactions
            if record.get("f") == TXN:
                plain_function_names(record.get("value"))
        try:
            op = op_from_record(record, position)
        except RecordError as e:
            items.append((line, Problem(name, line, str(e))))
            continue
        records[len(items)] = record
        position += 1
        items.append((line, op))
    yield from split_tuples(name, items, records)


def op_to_edn(op: Op, *, keys: str = "key-fields") -> str:
    """One op as a Jepsen EDN map: ``type``, ``f`` and a ``nemesis`` process as keywords.

    Args:
        op: the op.
        keys: how its key is written (:func:`harness.history.independent.edn_mode`): ``tuples`` wraps
            the value as ``[key value]``; ``key-fields`` writes a ``:key`` field when there is a key;
            ``key-nil`` writes ``:key nil`` on a client op without one.
    """
    edn_format = _edn()
    fields = op.to_dict()
    client = op.process != NEMESIS
    if client and op.f == "txn" and isinstance(op.value, list):
        fields["value"] = [_micro_op(m) for m in op.value]
    if client and keys == TUPLES:
        fields.pop("key", None)
        fields["value"] = [op.key, fields["value"]]
    elif client and keys == KEY_NIL and op.key is None:
        fields["key"] = None
    parts = []
    for k, v in fields.items():
        as_keyword = k in ("type", "f") or (k == "process" and isinstance(v, str))
        parts.append(f":{k} {edn_format.dumps(to_edn(v, keyword=as_keyword))}")
    return "{" + ", ".join(parts) + "}"


def _micro_op(m: Any) -> Any:
    """A transaction's micro-op with its function as a keyword (``[:read :x 1]``), as Knossos reads it."""
    if isinstance(m, list) and m and isinstance(m[0], str) and not isinstance(m[0], Keyword):
        return [Keyword(m[0]), *m[1:]]
    return m


def write_edn(ops: Iterable[Op], path: str | Path) -> None:
    """Write ops as an EDN vector, one map per line, with keys as Jepsen writes them (see :func:`op_to_edn`)."""
    ops = list(ops)
    keys = edn_mode(ops)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("[\n")
        for op in ops:
            fh.write(op_to_edn(op, keys=keys) + "\n")
        fh.write("]\n")
