"""Witness files: each anomaly's transactions as a small Fencepost JSONL history that fails again on its own.

A witness holds the invocation and completion of every transaction the anomaly names, plus those its edges
need to hold again (for list-append, the read that fixed a key's version order and the writers in it; for
rw-register, the writer of a version read), in history order with their original indices and times (so process
and real-time order are kept). Each transaction keeps only its micro-ops on the anomaly's keys, so the rest of
the history brings no noise (reads of values whose writers are not in the file).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import orjson

from harness.history.op import Op


def witness_plan(entry: dict[str, Any]) -> tuple[set[int], list[Any] | None]:
    """The op indices and keys an anomaly entry's witness holds (keys None: keep every micro-op)."""
    plan = entry.get("witness") or {}
    indices: set[int] = set()
    for txn in plan.get("txns", []):
        for i in (txn.get("invoke_index"), txn.get("complete_index")):
            if i is not None:
                indices.add(int(i))
    keys = plan.get("keys")
    return indices, (list(keys) if keys else None)


def _filtered(op: Op, keys: list[Any] | None) -> dict[str, Any]:
    out = op.to_dict()
    out.pop("line", None)
    if keys is not None and op.f == "txn" and isinstance(op.value, list):
        wanted = set(_hashable(keys))
        out["value"] = [m for m in op.value if isinstance(m, list | tuple) and len(m) == 3
                        and _hashable_one(m[1]) in wanted]
    return out


def _hashable_one(x: Any) -> Any:
    try:
        hash(x)
    except TypeError:
        return repr(x)
    return x


def _hashable(xs: Iterable[Any]) -> Iterable[Any]:
    return (_hashable_one(x) for x in xs)


def write_witness(result: dict[str, Any], ops: Sequence[Op], dir: str | Path, stem: str) -> list[Path]:
    """Write one witness per anomaly in ``result`` into ``dir`` as ``<stem>.<type>.<n>.witness.jsonl``."""
    out_dir = Path(dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    by_index: dict[int, Op] | None = None
    written: list[Path] = []
    safe_stem = re.sub(r"[^A-Za-z0-9._-]+", "_", stem)
    for kind, entries in result.get("anomalies", {}).items():
        for n, entry in enumerate(entries):
            indices, keys = witness_plan(entry)
            if not indices:
                continue
            if by_index is None:
                by_index = {op.index: op for op in ops}
            chosen = sorted(i for i in indices if i in by_index)
            path = out_dir / f"{safe_stem}.{kind}.{n}.witness.jsonl"
            with open(path, "wb") as fh:
                for i in chosen:
                    fh.write(orjson.dumps(_filtered(by_index[i], keys), default=str) + b"\n")
            written.append(path)
    return written
