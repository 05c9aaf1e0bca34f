"""EDN values as plain Python that remembers what Jepsen wrote, so Fencepost's EDN output matches it.

Reading turns ``edn-format``'s values into plain Python: vectors and lists into lists, maps into dicts,
``nil`` into None. Two EDN kinds would be lost that way and matter to Jepsen, so they get subclasses
that behave exactly as the plain types (equal, same hash, JSON-ready) and are written back as they
were read:

* :class:`Keyword`, a ``str``: ``:read`` reads as ``Keyword("read")``, equal to ``"read"``, and is
  written back as ``:read`` (models compare micro-op names and keys as strings);
* :class:`EdnSet`, a ``list`` of the elements (sorted by ``repr``): ``#{1 2}`` is written back as a set.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any


class Keyword(str):
    """An EDN keyword read as its name; equal to that name as a plain ``str``, shown as ``:name``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return ":" + str.__str__(self)


class EdnSet(list[Any]):
    """An EDN set read as the list of its elements, sorted by ``repr``; written back as ``#{...}``."""

    __slots__ = ()


def _edn() -> Any:
    """The edn-format module, imported on first use (it costs ~80 ms to import)."""
    import edn_format

    return edn_format


def plain(value: Any) -> Any:
    """Convert edn-format values to plain Python (keywords to :class:`Keyword`, sets to :class:`EdnSet`)."""
    edn_format = _edn()
    if isinstance(value, edn_format.Keyword):
        return Keyword(value.name)
    if isinstance(value, edn_format.Symbol):
        return value.name
    if isinstance(value, (str, bytes, int, float)) or value is None:
        return value
    if isinstance(value, Mapping):
        return {plain(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, edn_format.ImmutableList)):
        return [plain(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return EdnSet(sorted((plain(v) for v in value), key=repr))
    return value


_TAG = re.compile(r"#([A-Za-z][\w.*+!?$%&=<>/:-]*)")
_ALLOWED: set[str] = set()


def allow_tags(text: str) -> None:
    """Let edn-format read every ``#tag`` in ``text`` as the value it tags.

    Jepsen writes records (``#jepsen.history.Op{...}``, ``#knossos.model.CASRegister{...}``) and
    Clojure objects (``#object[...]``); edn-format refuses tags it does not know. A record is a map,
    so each such tag (a class name, with a dot, or ``object``) is read as what follows it. Other
    unknown tags stay errors.
    """
    edn_format = _edn()
    for name in set(_TAG.findall(text)) - _ALLOWED:
        if "." in name or name == "object":  # a record's class, or an object Clojure cannot print
            edn_format.add_tag(name, _untagged)
            _ALLOWED.add(name)


def _untagged(value: Any) -> Any:
    """A tagged value's handler: the value itself."""
    return value


def parse_value(text: str) -> Any:
    """One EDN value as plain Python (see :func:`plain`).

    Raises:
        ValueError: ``text`` is not exactly one EDN value.
    """
    edn_format = _edn()
    allow_tags(text)
    try:
        values = edn_format.loads_all(text)
    except Exception as e:  # edn-format raises several exception types
        raise ValueError(f"unparseable EDN: {e}") from None
    if len(values) != 1:
        raise ValueError(f"expected one EDN value, found {len(values)}")
    return plain(values[0])


def to_edn(value: Any, *, keyword: bool = False) -> Any:
    """A plain value as edn-format values, ready for ``edn_format.dumps``.

    :class:`Keyword` and :class:`EdnSet` are written as keyword and set; with ``keyword``, any string is
    written as a keyword (for fields such as ``:type`` and ``:f``).
    """
    edn_format = _edn()
    if isinstance(value, Keyword) or (keyword and isinstance(value, str)):
        return edn_format.Keyword(str(value))
    if isinstance(value, dict):
        return edn_format.ImmutableDict({to_edn(k): to_edn(v) for k, v in value.items()})
    if isinstance(value, EdnSet):
        return frozenset(to_edn(v) for v in value)
    if isinstance(value, (list, tuple)):
        return edn_format.ImmutableList([to_edn(v) for v in value])
    return value


def dumps(value: Any, *, keyword: bool = False) -> str:
    """A plain value as EDN text (see :func:`to_edn`)."""
    return str(_edn().dumps(to_edn(value, keyword=keyword)))
