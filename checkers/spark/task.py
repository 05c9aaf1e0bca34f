"""What runs in a Spark executor: rebuild each key's ops from Arrow batches, pair them, check the key.

The rows arrive partitioned by key and sorted by (key, index), so a key's ops are contiguous, though a
key may straddle two Arrow batches. Each key is paired and checked exactly as the local engine checks
a partition (:func:`checkers.linearizability.checker.check_partition`); one verdict row per key
goes back to the driver, with the counterexample pickled when there is one. (An info call's return
time is the key's last time here rather than the history's: the checker orders by op indices, so
verdicts and counterexamples do not depend on it.)
"""

from __future__ import annotations

import pickle
import time
from collections.abc import Iterator
from typing import Any

from harness.history.op import Op, OpType
from harness.history.parquet import Decoder

VERDICT_FIELDS = (
    ("key", "string"), ("first_index", "int64"), ("valid", "string"), ("ops", "int64"), ("pruned", "int64"),
    ("method", "string"), ("nodes", "int64"), ("strays", "int64"), ("calls", "int64"),
    ("cex", "binary"),
)
"""The verdict rows' columns: key as JSON text, the verdict as ``true``/``false``/``unknown``."""

_TYPES = {t.value: t for t in OpType}


def verdict_schema() -> Any:
    """The Arrow schema of the verdict rows."""
    import pyarrow as pa

    types = {"string": pa.string(), "int64": pa.int64(), "binary": pa.binary()}
    return pa.schema([(n, types[t]) for n, t in VERDICT_FIELDS])


def spark_ddl() -> str:
    """The verdict rows' schema as Spark DDL."""
    return ", ".join(f"`{n}` {'bigint' if t == 'int64' else t}" for n, t in VERDICT_FIELDS)


def _op(row: tuple[Any, ...], decode: Decoder) -> Op:
    """One Op from a row (index, time, process, type, f, key, value, error, extra), as read_parquet builds it."""
    index, t, process, kind, f, key, value, error, extra = row
    if isinstance(process, str) and process.lstrip("-").isdigit():
        process = int(process)
    op_type = _TYPES.get(kind)
    if op_type is None or type(index) is not int or type(t) is not int or not f:
        from harness.history.parquet import _row_to_op

        raw = dict(zip(("index", "time", "process", "type", "f", "key", "value", "error", "extra"), row, strict=True))
        got = _row_to_op("<spark>", index if type(index) is int else 0, raw)
        if isinstance(got, Op):
            return got
        raise ValueError(str(got))
    ex = decode(extra) if extra is not None else {}
    return Op(index, t, process, op_type, f, decode(key), decode(value), decode(error),
              dict(ex) if isinstance(ex, dict) else {})


def make_checker(model_name: str, init: Any, deadline: float | None, explain: bool, *,
                 nil_read: str = "absent") -> Any:
    """The function for ``mapInArrow``: Arrow batches of ops in, Arrow batches of verdicts out.

    Args:
        model_name: a name from :data:`checkers.models.MODELS`.
        init: the model's initial value.
        deadline: :func:`time.time` instant after which a key's verdict is unknown.
        explain: attach counterexamples to invalid keys.
        nil_read: ``any`` or ``absent``: what an ok read of nil means (:mod:`harness.history.semantics`);
            the driver passes the file's rule, as the local engine builds its model with it.
    """

    def check_batches(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        from checkers.linearizability.checker import check_partition
        from checkers.models import make_model
        from checkers.models.base import Partition
        from harness.history.pairing import pair_calls

        inner = make_model(model_name, init, nil_read=nil_read).inner
        decode = Decoder()
        schema = verdict_schema()
        out: dict[str, list[Any]] = {n: [] for n, _ in VERDICT_FIELDS}

        def flush() -> Any:
            nonlocal out
            batch = pa.RecordBatch.from_pydict(out, schema=schema)
            out = {n: [] for n, _ in VERDICT_FIELDS}
            return batch

        def check(key_text: str | None, ops: list[Op]) -> None:
            calls = pair_calls(ops)
            # Completions left unpaired here would pair with another key's invocation globally.
            paired = sum(1 for c in calls if c.complete is not None)
            strays = sum(1 for o in ops if o.type is not OpType.INVOKE) - paired
            mono = None if deadline is None else time.monotonic() + max(0.0, deadline - time.time())
            part = Partition(decode(key_text), inner, calls)  # type: ignore[arg-type]
            v = check_partition(part, deadline=mono, explain=explain)
            out["key"].append(key_text)
            out["first_index"].append(ops[0].index)
            out["valid"].append({True: "true", False: "false"}.get(v.valid, "unknown"))  # type: ignore[arg-type]
            out["ops"].append(v.ops)
            out["pruned"].append(v.pruned)
            out["method"].append(v.method)
            out["nodes"].append(v.nodes)
            out["strays"].append(strays)
            out["calls"].append(len(calls))
            out["cex"].append(None if v.counterexample is None else pickle.dumps(v.counterexample))

        current: str | None = None
        ops: list[Op] = []
        started = False
        for batch in batches:
            cols = [batch.column(i).to_pylist() for i in range(9)]
            keys = cols[5]
            for i, row in enumerate(zip(*cols, strict=True)):
                k = keys[i]
                if not started or k != current:
                    if started:
                        check(current, ops)
                    current, ops, started = k, [], True
                ops.append(_op(row, decode))
            if len(out["key"]) >= 1000:
                yield flush()
        if started:
            check(current, ops)
        if out["key"]:
            yield flush()

    return check_batches
