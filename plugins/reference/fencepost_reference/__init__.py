"""The reference system's adapter: the plugin that lets Fencepost test ``system/``.

One package, shaped as an outside plugin would be: :mod:`.plugin` (processes, readiness, primaries,
membership, collection), :mod:`.client` (the workloads' operations on the system's client),
:mod:`.faults` (faults aimed at its protocol windows), :mod:`.checkers` (white-box checkers that read its
event logs), :mod:`.recipes` (its seeded bugs and the test that exposes each) and :mod:`.cli`
(``fencepost cluster``). It is registered under the ``fencepost.systems`` entry point as ``reference``;
the framework never imports it.
"""

from fencepost_reference.plugin import ReferencePlugin, plugin

__all__ = ["ReferencePlugin", "plugin"]
