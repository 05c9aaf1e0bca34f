"""Read-only support for the two history formats in Porcupine's test data.

* ``porcupine-etcd``: Jepsen etcd logs, ``INFO  jepsen.util - <process> :<type> :<f> <value>``, a single
  compare-and-set register. ``:fail :read :timed-out`` stays a ``fail`` with error ``timed-out``: a read
  changes nothing, so dropping it (as fail ops are dropped) is exactly "its outcome is unknown". ``:info``
  completions carry their error and no value. Other lines are noise and skipped.
* ``porcupine-kv``: one EDN map per line with ``:process :type :f :key :value``. A fast exact-shape
  parser handles the lines Porcupine writes; anything else goes through the general EDN reader.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from harness.history.edn import read_edn
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


def read_porcupine_etcd(path: str | Path) -> Iterator[tuple[int, Op | Problem]]:
    """Yield ``(line, op or problem)`` for each ``jepsen.util`` event line of an etcd log."""
    name = str(path)
    position = 0
    with open(path, encoding="utf-8", errors="replace") as fh:
        for lineno, line in enumerate(fh, start=1):
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


def read_porcupine_kv(path: str | Path) -> Iterator[tuple[int, Op | Problem]]:
    """Yield ``(line, op or problem)`` for each line of a Porcupine kv log."""
    name = str(path)
    with open(path, encoding="utf-8", errors="replace") as fh:
        lines = fh.readlines()
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
    ops = list(read_edn(name))
    yield from ops[position:]
