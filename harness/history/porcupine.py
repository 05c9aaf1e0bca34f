"""Read-only support for the two history formats in Porcupine's test data.

* ``porcupine-etcd``: Jepsen etcd logs, ``INFO  jepsen.util - <process> :<type> :<f> <value>``, a single
  compare-and-set register. ``:fail :read :timed-out`` stays a ``fail`` with error ``timed-out``: a read
  changes nothing, so dropping it (as fail ops are dropped) is exactly "its outcome is unknown". ``:info``
  completions carry their error and no value. Other lines are noise and skipped.
* ``porcupine-kv``: one EDN map per line with ``:process :type :f :key :value``. A fast exact-shape
  parser handles the lines Porcupine writes; anything else goes through the general EDN reader.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from harness.history.errors import Problem
from harness.history.op import Op, OpType

_ETCD_LINE = re.compile(r"jepsen\.util\s+-\s+(\S+)\s+:(\w+)\s+:([\w-]+)\s*(.*?)\s*$")
_TYPES = {t.value: t for t in OpType}


def _etcd_value(text: str) -> tuple[Any, str | None]:
    """Parse an etcd log value: nil, an integer, ``[a b]``, or a keyword error such as ``:timed-out``."""
    if text in ("nil", ""):
        return None, None
    if text.startswith(":"):
        return None, text[1:]
    if text.startswith("[") and text.endswith("]"):
        return [_etcd_int(part) for part in text[1:-1].split()], None
    return _etcd_int(text), None


def _etcd_int(text: str) -> int | None:
    if text == "nil":
        return None
    return int(text)


# The same fields as _ETCD_LINE, found over a whole file: whitespace never crosses a line end, and
# the value's trailing whitespace is stripped afterwards.
_ETCD_EVENTS = re.compile(r"jepsen\.util[^\S\n]+-[^\S\n]+(\S+)[^\S\n]+:(\w+)[^\S\n]+:([\w-]+)[^\S\n]*([^\n]*)")


def read_porcupine_etcd(path: str | Path) -> Iterator[tuple[int, Op | Problem]]:
    """Yield ``(line, op or problem)`` for each ``jepsen.util`` event line of an etcd log."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        text = fh.read()
    fast = _etcd_fast(text)
    return iter(fast) if fast is not None else _etcd_lines(str(path), text)


def _etcd_fast(text: str) -> list[tuple[int, Op | Problem]] | None:
    """Every event of a log whose ``jepsen.util`` lines are all well formed, in one pass; else None
    (the line reader then names each malformed line)."""
    rows = _ETCD_EVENTS.findall(text)
    if len(rows) != text.count("jepsen.util"):
        return None
    if len(rows) == text.count("\n") + (not text.endswith("\n")):
        linenos: Iterable[int] = range(1, len(rows) + 1)  # every line is an event (the usual case)
    else:
        linenos = itertools.accumulate(
            (text.count("\n", a, b) for a, b in itertools.pairwise(
                itertools.chain([0], (m.start() for m in _ETCD_EVENTS.finditer(text))))), initial=1)
        linenos = itertools.islice(linenos, 1, None)
    out: list[tuple[int, Op | Problem]] = []
    types = _TYPES
    values: dict[str, tuple[Any, str | None]] = {}
    try:
        for (proc_text, type_name, f, value_text), lineno in zip(rows, linenos, strict=False):
            op_type = types.get(type_name)
            if op_type is None:
                return None
            if not proc_text.isdigit():
                if proc_text.lstrip(":") == "nemesis":
                    continue
                return None
            parsed = values.get(value_text)
            if parsed is None:
                parsed = values[value_text] = _etcd_value(value_text.rstrip())
            value, error = parsed
            if type(value) is list:
                value = value[:]  # each op owns its list
            position = len(out)
            out.append((lineno, Op(position, position, int(proc_text), op_type, f, None, value, error, {})))
    except ValueError:
        return None
    return out


def _etcd_lines(name: str, text: str) -> Iterator[tuple[int, Op | Problem]]:
    """The line-by-line reader, which reports each malformed event line."""
    position = 0
    for lineno, line in enumerate(text.split("\n"), start=1):
        if "jepsen.util" not in line:
            continue
        m = _ETCD_LINE.search(line)
        if m is None:
            yield lineno, Problem(name, lineno, "unparseable jepsen.util event line")
            continue
        proc_text, type_name, f, value_text = m.groups()
        op_type = _TYPES.get(type_name)
        if op_type is None:
            yield lineno, Problem(name, lineno, f"unknown type ':{type_name}'")
            continue
        if not proc_text.isdigit():
            if proc_text.lstrip(":") == "nemesis":
                continue  # fault events carry no register operation
            yield lineno, Problem(name, lineno, f"process must be an integer, got {proc_text!r}")
            continue
        try:
            value, error = _etcd_value(value_text)
        except ValueError:
            yield lineno, Problem(name, lineno, f"unparseable value {value_text!r}")
            continue
        yield lineno, Op(position, position, int(proc_text), op_type, f, None, value, error)
        position += 1


_KV_LINE = re.compile(
    r'\{:process (\d+), :type :(\w+), :f :(\w+), :key "((?:[^"\\]|\\.)*)", :value (nil|"(?:[^"\\]|\\.)*")\}\s*$'
)


# _KV_LINE over a whole file of lines without escapes.
_KV_LINES = re.compile(
    r'^\{:process (\d+), :type :(\w+), :f :(\w+), :key "([^"\\\n]*)", :value (nil|"[^"\\\n]*")\}[^\S\n]*$',
    re.MULTILINE)


def read_porcupine_kv(path: str | Path) -> Iterator[tuple[int, Op | Problem]]:
    """Yield ``(line, op or problem)`` for each line of a Porcupine kv log."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        text = fh.read()
    fast = _kv_fast(text)
    if fast is not None:
        return iter(fast)
    lines = [line + "\n" for line in text.split("\n")]  # as readlines() splits them
    lines[-1] = lines[-1][:-1]
    return _kv_lines(str(path), lines if lines[-1] else lines[:-1])


def _kv_fast(text: str) -> list[tuple[int, Op | Problem]] | None:
    """The ops of a log whose every line has the exact shape Porcupine writes, in one pass; else None."""
    if "\\" in text:
        return None
    rows = _KV_LINES.findall(text)
    if len(rows) != text.count("\n") + (not text.endswith("\n")):
        return None  # blank or other lines: the line reader handles them
    types = _TYPES
    out: list[tuple[int, Op | Problem]] = []
    for proc, type_name, f, key, value in rows:
        op_type = types.get(type_name)
        if op_type is None:
            return None
        position = len(out)
        out.append((position + 1, Op(position, position, int(proc), op_type, f, key,
                                     None if value == "nil" else value[1:-1], None, {})))
    return out


def _kv_lines(name: str, lines: list[str]) -> Iterator[tuple[int, Op | Problem]]:
    """Line by line, falling back to the general EDN reader at the first line of another shape."""
    position = 0
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        m = _KV_LINE.match(line)
        if m is None or "\\" in line or m.group(2) not in _TYPES:
            break  # not the exact shape: fall back to the general EDN reader below
        proc, type_name, f, key, value = m.groups()
        yield lineno, Op(position, position, int(proc), _TYPES[type_name], f, key,
                         None if value == "nil" else value[1:-1])
        position += 1
    else:
        return
    # Rare path: re-read the whole file with edn-format, which reports exact problems.
    from harness.history.edn import read_edn

    ops = list(read_edn(name))
    yield from ops[position:]
