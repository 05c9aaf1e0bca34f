"""Which rules a history is checked by: each format keeps the semantics of the tool that writes it.

* ``edn`` (Jepsen's rules, as Knossos checks them, named ``knossos``):

  - an ``ok`` read of nil constrains nothing: the client did not learn the value;
  - ``fail``: the op did not happen, and is dropped; ``info``: it may take effect any time after its
    invocation, or never;
  - ops are ordered by position (``:index``); ``:time`` is advisory: going backwards is one warning;
  - ``[k v]`` values are ``jepsen.independent`` tuples: each key gets its own verdict.

* ``jsonl`` and ``parquet`` (native, named ``fencepost``): an ``ok`` read of ``null`` means the value
  is absent; ``fail`` dropped, ``info`` as above; ops are ordered by ``index``, and time going
  backwards makes the history malformed; keys come from the ``key`` field.

* ``elle-json`` (elle-cli's JSON, named ``elle``): read as elle-cli reads it, through Jepsen's history:
  ops are ordered by position and ``time`` is advisory, as in EDN; a nil read is absent.

* ``porcupine-etcd`` and ``porcupine-kv`` (named ``porcupine``): nil is absent, as Porcupine reads
  them; ops are ordered by position. The ``etcd`` model keeps a failed cas as "the value was not old".

``--nil-read any|absent`` overrides the nil-read rule for any format. The nil-read rule applies to the
models that read a value (``register``, ``cas-register``, ``etcd`` and each read of a
``multi-register`` transaction).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

NIL_READS = ("any", "absent")
"""``any``: an ok read of nil is legal in every state (Knossos). ``absent``: nil is a value, "no value"."""

ADVISORY_TIME_FORMATS = frozenset({"edn", "elle-json"})
"""Formats whose ``time`` may go backwards (Jepsen records it from many threads); ops keep their order."""


@dataclass(frozen=True, slots=True)
class Semantics:
    """The rules a history was checked by.

    Attributes:
        name: whose rules: ``knossos`` (Jepsen EDN), ``elle`` (elle-cli JSON), ``fencepost`` (native) or
            ``porcupine``.
        nil_read: ``any`` or ``absent`` (see :data:`NIL_READS`).
        time: ``advisory`` (going backwards is a warning) or ``strict`` (it is an error).
        order: what orders the ops: ``position`` or ``index``.
    """

    name: str
    nil_read: str
    time: str
    order: str

    def to_dict(self) -> dict[str, Any]:
        """The rules as a JSON-ready dict."""
        return asdict(self)


def semantics_for(fmt: str, nil_read: str | None = None) -> Semantics:
    """The rules for a history in format ``fmt`` (already detected), with ``nil_read`` overriding the default.

    Raises:
        ValueError: ``nil_read`` is not one of :data:`NIL_READS`.
    """
    if nil_read is not None and nil_read not in NIL_READS:
        raise ValueError(f"nil-read must be one of {', '.join(NIL_READS)}, got {nil_read!r}")
    if fmt == "edn":
        return Semantics("knossos", nil_read or "any", "advisory", "position")
    if fmt == "elle-json":
        return Semantics("elle", nil_read or "absent", "advisory", "position")
    if fmt.startswith("porcupine"):
        return Semantics("porcupine", nil_read or "absent", "strict", "position")
    return Semantics("fencepost", nil_read or "absent", "strict", "index")


def strict_time(fmt: str) -> bool:
    """True when time going backwards makes a history in format ``fmt`` malformed."""
    return fmt not in ADVISORY_TIME_FORMATS
