"""elle-cli's JSON histories: one JSON array of op objects, as elle-cli reads them.

Each element is an op object with ``type``, ``value``, ``process`` and usually ``index``, ``f`` and ``time``
(``{"index": 3, "process": 1, "type": "ok", "value": [["append", 1, 2], ["r", 2, []]]}``). elle-cli turns
the strings of ``type``, ``f`` and each micro-op's function into keywords; here they stay the strings
``"ok"``, ``"txn"``, ``"append"``, ``"r"`` and ``"w"``, as every Fencepost history has them. Keys and values
are kept as they come (elle-cli's samples use both ints and strings such as ``"x"``).

Elle's histories often leave out ``f`` on transactions: an op without ``f`` whose value is a list of
micro-ops (lists that start with a string) is a ``"txn"``. ``index`` and ``time`` default to the op's
position in the array, as Jepsen numbers ops.

Each op is reported at the line where its object starts (found by a scan that skips strings), so a
problem names ``file:line`` as in every other format.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import orjson

from harness.history.errors import Problem
from harness.history.micro_ops import TXN, looks_like_txn
from harness.history.op import Op
from harness.history.records import RecordError, op_from_record

_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"|[{}]')
"""A JSON string (skipped whole, so braces inside strings do not count), or a brace."""


def read_elle_json(path: str | Path) -> Iterator[tuple[int, Op | Problem]]:
    """Yield ``(line, op or problem)`` for each op object of an elle-cli JSON history.

    A file that is not one JSON array gives one problem at the line where parsing stopped; an element
    that is not an op object gives a problem at its line, and reading goes on.
    """
    name = str(path)
    data = Path(path).read_bytes()
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError as e:
        yield e.lineno, Problem(name, e.lineno, f"unparseable JSON: {e.msg} at column {e.colno}")
        return
    if not isinstance(document, list):
        yield 1, Problem(name, 1, f"expected a JSON array of op objects (elle-cli's history), "
                                  f"got a JSON {type(document).__name__}")
        return
    lines = object_lines(data, len(document))
    for position, record in enumerate(document):
        line = lines[position] if position < len(lines) else position + 1
        if isinstance(record, dict) and "f" not in record and looks_like_txn(record.get("value")):
            record["f"] = TXN
        try:
            op = op_from_record(record, position)
        except RecordError as e:
            yield line, Problem(name, line, str(e))
            continue
        yield line, op


def object_lines(data: bytes, expected: int) -> list[int]:
    """The 1-based line where each top-level element of a JSON array of objects starts.

    Only objects at nesting depth zero among objects are counted (the array's own brackets and the
    lists inside values do not matter), and strings are skipped whole. When the count found is not
    ``expected`` (an element that is not an object), positions in the array, from 1, are returned instead.
    """
    starts: list[int] = []
    depth = 0
    line = 1
    last = 0
    count = data.count
    for match in _TOKENS.finditer(data):
        token = match.group()
        if token == b"{":
            if depth == 0:
                at = match.start()
                line += count(b"\n", last, at)
                last = at
                starts.append(line)
            depth += 1
        elif token == b"}":
            depth -= 1
    if len(starts) != expected:
        return list(range(1, expected + 1))
    return starts
