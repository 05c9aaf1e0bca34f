"""Transactions' values as readers find them: a list of micro-ops ``[f, k, v]``.

Readers use these two rules so that a transaction reads the same from every format: an op without
``f`` whose value is a list of micro-ops is a ``"txn"`` (Elle's histories often leave ``f`` out), and a
micro-op's function is a plain string (EDN's ``:append`` becomes ``"append"``; keys and values are kept
as they come). The known names are also shared, one string object each, instead of one per micro-op (a
million-transaction history holds millions of them). Whether each micro-op is well formed is the
checker's to say, with the op's line.
"""

from __future__ import annotations

from typing import Any

TXN = "txn"
"""The ``f`` of a transaction."""


def looks_like_txn(value: Any) -> bool:
    """True for a transaction's value: a non-empty list of micro-ops, each a list that starts with a string."""
    return (type(value) is list and bool(value)
            and all(type(m) is list and bool(m) and isinstance(m[0], str) for m in value))


_NAMES = {name: name for name in ("append", "r", "w")}


def plain_function_names(value: Any) -> None:
    """Make each micro-op's function a plain ``str`` in place (an EDN keyword is a ``str`` subclass), the
    shared one for the known names."""
    if type(value) is not list:
        return
    names = _NAMES
    for m in value:
        if type(m) is list and m and isinstance(m[0], str):
            f = m[0]
            m[0] = names.get(f) or (f if type(f) is str else str(f))
