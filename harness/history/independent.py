"""``jepsen.independent`` tuples: a ``[key value]`` pair in ``:value`` names the key an op addresses.

Jepsen lifts a single-object test to many keys by wrapping every client op's value in a tuple
(``{:f :write, :value [3 4]}`` writes 4 to key 3) and checks each key's subhistory on its own. In EDN
a tuple is printed as a plain vector, so Fencepost recognises a history as independent by its shape:

* no client op (the nemesis's are ignored) carries a ``:key`` field of its own;
* every client invocation's value is a two-element vector whose first element is an integer or a
  string or keyword (a key), and there is at least one; a cas's second element is itself a pair
  (``[k [old new]]``), so that a plain cas of ``[1 2]`` is not taken for key 1;
* every completion's value is such a tuple with its invocation's key, or nil.

Then each op's key becomes :attr:`Op.key` and its value the tuple's second element. A completion
with another key than its invocation's is a malformed history. A register history is never taken for
one: its reads are invoked with nil, and a multi-register's transactions start with a vector.

Writing EDN does the reverse (:func:`edn_mode`): a history whose client ops all carry keys, each
completion with its invocation's, is written as tuples; otherwise keys go in ``:key`` fields, and a
history without keys whose values could be mistaken for tuples gets ``:key nil`` on its client ops,
so that it reads back as it was.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from harness.history.errors import Problem
from harness.history.op import NEMESIS, Op, OpType

TUPLES = "tuples"
KEY_FIELDS = "key-fields"
KEY_NIL = "key-nil"


def is_tuple(value: Any) -> bool:
    """True when ``value`` can be a ``[key value]`` tuple: two elements, the first an int or a string."""
    return type(value) is list and len(value) == 2 and _is_key(value[0])


def _pair(value: Any) -> bool:
    """True for a cas argument, ``[old new]``: a cas invoked with ``[1 2]`` is not key 1's op."""
    return type(value) is list and len(value) == 2


def _is_key(k: Any) -> bool:
    """True for what a tuple's key can be: an int or a string (a keyword reads as one)."""
    return isinstance(k, str) or (isinstance(k, int) and not isinstance(k, bool))


def split_tuples(path: str, items: list[tuple[int, Op | Problem]],
                 records: Mapping[int, Mapping[str, Any]]) -> list[tuple[int, Op | Problem]]:
    """Unwrap the tuples of an independent history in place (see the module's rules).

    Args:
        path: the file, for problems.
        items: ``(line, op or problem)`` as read, in order.
        records: each op's fields as read, by the op's position in ``items``: an op with a ``key``
            field, even nil, means the history names its keys itself.

    Returns:
        ``items``, its ops unwrapped when the history is independent, with a problem in place of each
        completion whose key differs from its invocation's.
    """
    if not _independent(items, records):
        return items
    open_key: dict[object, tuple[Any, int]] = {}
    out: list[tuple[int, Op | Problem]] = []
    for line, op in items:
        if isinstance(op, Problem) or op.process == NEMESIS:
            out.append((line, op))
            continue
        if op.type is OpType.INVOKE:
            op.key, op.value = op.value
            open_key[op.process] = (op.key, line)
            out.append((line, op))
            continue
        opened = open_key.pop(op.process, None)
        if opened is None:  # the validator names the stray completion
            if is_tuple(op.value):
                op.key, op.value = op.value
            out.append((line, op))
            continue
        key, invoked_at = opened
        if op.value is None:
            op.key = key
        elif op.value[0] != key:
            out.append((line, Problem(path, line, f"independent key {op.value[0]!r} differs from key {key!r} "
                                                  f"of the invocation at line {invoked_at}")))
            continue
        else:
            op.key, op.value = op.value
        out.append((line, op))
    return out


def _independent(items: list[tuple[int, Op | Problem]], records: Mapping[int, Mapping[str, Any]]) -> bool:
    """Whether the ops have the shape of a ``jepsen.independent`` history and name no keys themselves."""
    client: list[Op] = []
    for position, (_, op) in enumerate(items):
        if isinstance(op, Problem) or op.process == NEMESIS:
            continue
        if "key" in records.get(position, {}):
            return False
        client.append(op)
    return _tuple_shaped(client)


def _tuple_shaped(client: Iterable[Op]) -> bool:
    """Whether every client op's value is a tuple as the module's rules say, with one invocation at least."""
    invocations = 0
    for op in client:
        if op.type is OpType.INVOKE:
            if not is_tuple(op.value) or (op.f == "cas" and not _pair(op.value[1])):
                return False
            invocations += 1
        elif op.value is not None and not is_tuple(op.value):
            return False
    return invocations > 0


def edn_mode(ops: Iterable[Op]) -> str:
    """How to write keys in EDN: :data:`TUPLES`, :data:`KEY_FIELDS` or :data:`KEY_NIL` (see the module)."""
    client = [op for op in ops if op.process != NEMESIS]
    if not client:
        return KEY_FIELDS
    if all(_is_key(op.key) for op in client):
        open_key: dict[object, Any] = {}
        for op in client:
            if op.type is OpType.INVOKE:
                if op.f == "cas" and not _pair(op.value):
                    return KEY_FIELDS  # [k nil] would not read back as a cas on key k
                open_key[op.process] = op.key
            elif open_key.pop(op.process, op.key) != op.key:
                return KEY_FIELDS
        return TUPLES
    if any(op.key is not None for op in client):
        return KEY_FIELDS
    return KEY_NIL if _tuple_shaped(client) else KEY_FIELDS
