"""Sequential specifications for the linearizability checker, and a registry of them by name.

Every model checks keyed histories key by key (Jepsen's independent keys): ops with the same ``key``
form one object, and ops without a key form one more.

How ``fencepost check`` picks a model when ``--model`` is absent (:func:`choose_model`):

1. by format: ``porcupine-etcd`` -> ``etcd``, ``porcupine-kv`` -> ``kv``;
2. otherwise by the functions present: ``get``/``put`` -> ``kv``; ``add`` -> ``set``;
   ``append`` -> ``log``; ``cas`` -> ``cas-register``; ``read``/``write`` -> ``register``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from checkers.models.base import UNKNOWN, Entry, Model, ModelBase, ModelError, Partition
from checkers.models.etcd import Etcd
from checkers.models.grow_set import GrowSet
from checkers.models.keyed import Keyed
from checkers.models.kv import KvString
from checkers.models.log import Log
from checkers.models.register import Register

__all__ = ["MODELS", "UNKNOWN", "Entry", "Model", "ModelBase", "ModelError", "Partition", "choose_model",
           "make_model"]

MODELS: dict[str, Callable[[Any], ModelBase]] = {
    "register": lambda init: Register(init),
    "cas-register": lambda init: Register(init, allow_cas=True),
    "etcd": lambda init: Etcd(init),
    "kv": lambda init: KvString(init),
    "log": lambda init: Log(init),
    "set": lambda init: GrowSet(init),
}
"""Model name -> factory taking the ``--init`` value (None: the model's default)."""


def make_model(name: str, init: Any = None) -> Keyed:
    """The named model, wrapped to check each key independently.

    Raises:
        ModelError: no model has that name.
    """
    factory = MODELS.get(name)
    if factory is None:
        raise ModelError(f"unknown model {name!r}; choose one of {', '.join(sorted(MODELS))}")
    return Keyed(factory(init))


def choose_model(fmt: str, fs: Iterable[str]) -> str:
    """The model name for a history of format ``fmt`` whose calls use the functions ``fs``."""
    if fmt == "porcupine-etcd":
        return "etcd"
    if fmt == "porcupine-kv":
        return "kv"
    present = set(fs)
    if present & {"get", "put"}:
        return "kv"
    if "add" in present:
        return "set"
    if "append" in present:
        return "log"
    if "cas" in present:
        return "cas-register"
    return "register"
