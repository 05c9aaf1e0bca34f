"""etcd's adapter: the plugin that lets Fencepost test etcd 3.4, the first system nobody here wrote.

:mod:`.plugin` (members, readiness, leader), :mod:`.readmission` (a member back after a wipe or remove),
:mod:`.gateway` (the v3 JSON API with exact outcomes), :mod:`.client` (the register, set and lock
workloads), :mod:`.membership` (member add and remove) and :mod:`.recipes` (its known-unsafe modes).
Registered under the ``fencepost.systems`` entry point as ``etcd``; the framework never imports it.
"""

from fencepost_etcd.plugin import EtcdPlugin, plugin

__all__ = ["EtcdPlugin", "plugin"]
