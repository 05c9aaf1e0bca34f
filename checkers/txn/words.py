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
    """Nanoseconds since start as seconds (``1.20 s``): two decimals, or more where a short time would show as
    zero, or to tell it from ``other`` (given both ways round, both get as many)."""
    times = [ns] if other is None else [ns, other]
    digits = 2
    while digits < 9 and any(0 < abs(t) / 1e9 * 10**digits < 1 for t in times):
        digits += 1
    while digits < 9 and other is not None and round(ns / 1e9, digits) == round(other / 1e9, digits) \
            and ns != other:
        digits += 1
    return f"{ns / 1e9:.{digits}f} s"
