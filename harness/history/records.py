"""Build :class:`Op` records from loosely typed mappings, reporting problems by ``file:line``.

Every reader (JSONL, EDN, Parquet, Porcupine logs) produces plain mappings first and turns them into
ops here, so type rules live in one place.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.history.errors import Problem
from harness.history.op import CORE_FIELDS, NEMESIS, Op, OpType

_TYPES = {t.value: t for t in OpType}


class RecordError(ValueError):
    """A mapping that cannot become an op; the message says which field is wrong and why."""


def _int_field(record: Mapping[str, Any], name: str, default: int) -> int:
    value = record.get(name, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise RecordError(f"field '{name}' must be an integer, got {type(value).__name__} {value!r}")
    if value < 0:
        raise RecordError(f"field '{name}' must not be negative, got {value}")
    return value


def _process(value: Any) -> int | str:
    if isinstance(value, bool):
        raise RecordError(f"field 'process' must be an integer or \"nemesis\", got {value!r}")
    if isinstance(value, int):
        return value
    if value == NEMESIS:
        return NEMESIS
    raise RecordError(f"field 'process' must be an integer or \"nemesis\", got {value!r}")


_CORE_SET = frozenset(CORE_FIELDS)


def op_from_record(record: Mapping[str, Any], position: int) -> Op:
    """Turn one mapping into an :class:`Op`.

    Args:
        record: the fields as read; ``index`` and ``time`` default to ``position`` when absent.
        position: the op's position in its file, from 0.

    Raises:
        RecordError: a required field is missing or has the wrong type.
    """
    # Fast path for well-formed records (the vast majority): exact type checks, no messages.
    if type(record) is dict:
        get = record.get
        op_type = _TYPES.get(get("type"))  # type: ignore[arg-type]
        index = get("index", position)
        time = get("time", position)
        process = get("process")
        f = get("f")
        if (
            op_type is not None
            and type(index) is int
            and type(time) is int
            and index >= 0
            and time >= 0
            and (type(process) is int or process == NEMESIS)
            and type(f) is str
            and f
        ):
            if _CORE_SET.issuperset(record):  # no extra fields (no set built)
                return Op(index, time, process, op_type, f, get("key"), get("value"), get("error"), {})
            return Op(index, time, process, op_type, f, get("key"), get("value"), get("error"),
                      {k: record[k] for k in record.keys() - _CORE_SET})
    return _op_from_record_checked(record, position)


def _op_from_record_checked(record: Mapping[str, Any], position: int) -> Op:
    """The slow path: the same rules, with a message naming the first field that breaks one."""
    if not isinstance(record, Mapping):
        raise RecordError(f"expected a map of op fields, got {type(record).__name__}")
    if "type" not in record:
        raise RecordError("missing field 'type'")
    if "process" not in record:
        raise RecordError("missing field 'process'")
    if "f" not in record:
        raise RecordError("missing field 'f'")
    type_name = record["type"]
    op_type = _TYPES.get(type_name) if isinstance(type_name, str) else None
    if op_type is None:
        raise RecordError(f"unknown type {type_name!r}: expected invoke, ok, fail or info")
    f = record["f"]
    if not isinstance(f, str) or not f:
        raise RecordError(f"field 'f' must be a non-empty string, got {f!r}")
    extra = {k: v for k, v in record.items() if k not in CORE_FIELDS}
    return Op(
        index=_int_field(record, "index", position),
        time=_int_field(record, "time", position),
        process=_process(record["process"]),
        type=op_type,
        f=f,
        key=record.get("key"),
        value=record.get("value"),
        error=record.get("error"),
        extra=extra,
    )


def problem(path: str, line: int, message: str) -> Problem:
    """A :class:`Problem` at ``path:line``."""
    return Problem(path, line, message)
