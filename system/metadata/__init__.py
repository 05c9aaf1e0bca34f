"""The metadata store: linearizable compare-and-set on versioned records, behind one interface.

Only the operator uses it. ``open_store(url)`` picks the backend: ``sqlite:///path/to/file.db``
(the embedded default) or ``etcd://host:port`` (an etcd v3 server, through its JSON gateway).
"""

from __future__ import annotations

from system.metadata.store import MetadataStore, Versioned


def open_store(url: str) -> MetadataStore:
    """Open the store named by ``url``."""
    if url.startswith("sqlite://"):
        from system.metadata.sqlite_store import SqliteStore

        return SqliteStore(url[len("sqlite://"):])
    if url.startswith("etcd://"):
        from system.metadata.etcd_store import EtcdStore

        return EtcdStore(url[len("etcd://"):])
    raise ValueError(f"unknown metadata URL {url!r}: use sqlite:///PATH or etcd://HOST:PORT")


__all__ = ["MetadataStore", "Versioned", "open_store"]
