"""How explanations write transactions, values and times."""

from __future__ import annotations

from typing import Any


def t(tid: int) -> str:
    """A transaction's name: ``T12``."""
    return f"T{tid}"


def value(v: Any) -> str:
    """A value as the explanations write it: lists as ``[1 2 3]`` (EDN's way), None as ``nil``, else repr."""
    if v is None:
        return "nil"
    if isinstance(v, list | tuple):
        return "[" + " ".join(value(x) for x in v) + "]"
    if isinstance(v, str):
        return repr(v)
    return str(v)


def seconds(ns: int, other: int | None = None) -> str:
    """Nanoseconds since start as seconds (``1.20 s``), with enough digits to tell it from ``other``."""
    digits = 2
    if other is not None and other != ns:
        while digits < 9 and round(ns / 1e9, digits) == round(other / 1e9, digits):
            digits += 1
    return f"{ns / 1e9:.{digits}f} s"
