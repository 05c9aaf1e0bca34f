"""Sequential specifications for the linearizability checker, and a registry of them by name.

The registry is open: besides the models here, any installed package can name a factory
``(init, nil_read) -> ModelBase`` under the ``fencepost.models`` entry-point group, and ``--model`` takes
its name.

Every model checks keyed histories key by key (Jepsen's independent keys): ops with the same ``key``
form one object, and ops without a key form one more.

How ``fencepost check`` picks a model when ``--model`` is absent (:func:`choose_model`):

1. by format: ``porcupine-etcd`` -> ``etcd``, ``porcupine-kv`` -> ``kv``;
2. otherwise by the functions present: ``txn`` -> ``multi-register``; ``acquire``/``release`` ->
   ``mutex``; ``get``/``put`` -> ``kv``; ``add`` -> ``set``; ``append`` -> ``log``; ``cas`` ->
   ``cas-register``; ``read``/``write`` -> ``register``.

The models that read a value (``register``, ``cas-register``, ``etcd``, ``multi-register``) take the
history's nil-read rule (:mod:`harness.history.semantics`).
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
from checkers.models.multi_register import MultiRegister
from checkers.models.mutex import Mutex
from checkers.models.register import Register

__all__ = ["MODELS", "UNKNOWN", "Entry", "Model", "ModelBase", "ModelError", "Partition", "available_models",
           "choose_model", "make_model"]

MODELS: dict[str, Callable[[Any, str], ModelBase]] = {
    "register": lambda init, nil_read: Register(init, nil_read=nil_read),
    "cas-register": lambda init, nil_read: Register(init, allow_cas=True, nil_read=nil_read),
    "etcd": lambda init, nil_read: Etcd(init, nil_read=nil_read),
    "kv": lambda init, nil_read: KvString(init),
    "log": lambda init, nil_read: Log(init),
    "set": lambda init, nil_read: GrowSet(init),
    "multi-register": lambda init, nil_read: MultiRegister(init, nil_read=nil_read),
    "mutex": lambda init, nil_read: Mutex(init),
}
"""Model name -> factory taking the ``--init`` value (None: the model's default) and the nil-read rule."""


def make_model(name: str, init: Any = None, *, nil_read: str = "absent") -> Keyed:
    """The named model, wrapped to check each key independently.

    Args:
        name: a key of :data:`MODELS`.
        init: the initial value (None: the model's default).
        nil_read: ``absent`` or ``any``: what an ok read of nil means (:mod:`harness.history.semantics`).

    Raises:
        ModelError: no model has that name, or ``init`` does not suit it.
    """
    factory = MODELS.get(name)  # the built-in names first: no entry-point scan for them
    if factory is None:
        factories = available_models()
        factory = factories.get(name)
        if factory is None:
            raise ModelError(f"unknown model {name!r}; choose one of {', '.join(sorted(factories))}")
    return Keyed(factory(init, nil_read))


def available_models() -> dict[str, Callable[[Any, str], ModelBase]]:
    """Every model by name: the ones here, and those installed under ``fencepost.models`` (which cannot
    replace one of these)."""
    from harness.registry import MODELS as GROUP
    from harness.registry import group

    installed: dict[str, Callable[[Any, str], ModelBase]] = {
        name: ep.load() for name, ep in group(GROUP).items() if name not in MODELS}
    return {**MODELS, **installed}


def choose_model(fmt: str, fs: Iterable[str]) -> str:
    """The model name for a history of format ``fmt`` whose calls use the functions ``fs``."""
    if fmt == "porcupine-etcd":
        return "etcd"
    if fmt == "porcupine-kv":
        return "kv"
    present = set(fs)
    if "txn" in present:
        return "multi-register"
    if present & {"acquire", "release"}:
        return "mutex"
    if present & {"get", "put"}:
        return "kv"
    if "add" in present:
        return "set"
    if "append" in present:
        return "log"
    if "cas" in present:
        return "cas-register"
    return "register"
