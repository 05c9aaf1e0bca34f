"""Witnesses on disk and on screen: where each op was read, the JSONL file, and the text.

A witness is written as ``DIR/<file>.<key>.witness.jsonl`` in the native JSONL history format (so
``fencepost check`` reads it back), each op with its original ``index``, ``time`` and fields plus
``source``: the ``file:line`` it was read from.
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Sequence
from typing import Any

from checkers.linearizability.witness import Witness

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def attach_sources(path: str, fmt: str, witnesses: Sequence[Witness]) -> None:
    """Fill each witness's ``sources`` with the ``file:line`` of its ops, reading ``path`` again
    (up to the last op wanted)."""
    from harness.history.formats import iter_history

    wanted = {op.index for w in witnesses for c in w.calls for op in (c.invoke, c.complete) if op is not None}
    found: dict[int, str] = {}
    if not wanted:
        return
    for line, op in iter_history(path, fmt):
        if op.index in wanted:
            found[op.index] = f"{path}:{line}"
            if len(found) == len(wanted):
                break
    for w in witnesses:
        w.sources = {i: found[i] for c in w.calls for op in (c.invoke, c.complete)
                     if op is not None and (i := op.index) in found}


def witness_key(w: Witness) -> Any:
    """The key a witness is about: its partition's, or the one key all its ops share."""
    if w.label is not None:
        return w.label
    keys = {c.key for c in w.calls}
    return keys.pop() if len(keys) == 1 else None


def witness_path(directory: str, path: str, w: Witness) -> str:
    """``DIR/<file>.<key>.witness.jsonl`` (``history`` when there is no key)."""
    key = witness_key(w)
    name = "history" if key is None else _UNSAFE.sub("_", str(key)) or "_"
    return os.path.join(directory, f"{os.path.basename(path)}.{name}.witness.jsonl")


def write_witness(directory: str, path: str, w: Witness) -> str:
    """Write ``w`` as native JSONL into ``directory``; the file written."""
    from harness.history.jsonl import op_to_json

    out = witness_path(directory, path, w)
    ops = sorted((op for c in w.calls for op in (c.invoke, c.complete) if op is not None), key=lambda op: op.index)
    # Native JSONL wants times that never go backwards; a history read with advisory times (Jepsen's
    # EDN) may have them, so those get their index as time, the original kept beside it.
    monotone = all(a.time <= b.time for a, b in itertools.pairwise(ops))
    with open(out, "w", encoding="utf-8") as fh:
        for op in ops:
            extra = dict(op.extra)
            if op.index in w.sources:
                extra["source"] = w.sources[op.index]
            if not monotone:
                extra["original_time"] = op.time
            op = op.__class__(op.index, op.time if monotone else op.index, op.process, op.type, op.f, op.key,
                              op.value, op.error, extra)
            fh.write(op_to_json(op) + "\n")
    return out


def explain_witness(w: Witness, *, recheck: str | None = None) -> str:
    """The witness in words: its ops with their ``file:line``, then why they cannot be linearized."""
    from checkers.linearizability.explain import explain

    key = witness_key(w)
    where = "" if key is None else f" for key {key!r}"
    proven = ("removing any one of them (with the reads only it explains) makes the rest linearizable"
              if w.minimal else "not proven minimal: the witness search ran out of its budget")
    lines = [f"Minimal witness{where}: {len(w.calls)} of {w.original} ops are not linearizable on their own; "
             f"{proven}."]
    for c, text in zip(w.calls, w.descriptions, strict=True):
        lines.append(f"  - process {c.process}: {text}  [{w.source(c)}]")
    if w.counterexample is not None:
        lines.append(explain(w.counterexample).replace("Not linearizable", "Why", 1))
    if recheck:
        lines.append(f"Check it again: {recheck} <witness file>")
    return "\n".join(lines)
