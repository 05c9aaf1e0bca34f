"""The embedded metadata store: one SQLite file, safe for several operator processes at once.

Each compare-and-set is one ``BEGIN IMMEDIATE`` transaction (a write lock on the file), so it is
linearizable across processes. ``synchronous=FULL`` makes every commit durable before it returns.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from typing import Any

from system.metadata.store import Versioned

LOCK_TIMEOUT_S = 30.0
"""How long a write or the switch to WAL waits for another process's lock."""


class SqliteStore:
    """Versioned records in a SQLite table ``records(key, value, version)``."""

    def __init__(self, path: str) -> None:
        self.path = path
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, timeout=LOCK_TIMEOUT_S, isolation_level=None, check_same_thread=False)
        self._set_wal()
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute("CREATE TABLE IF NOT EXISTS records (key TEXT PRIMARY KEY, value TEXT NOT NULL,"
                         " version INTEGER NOT NULL)")

    def _set_wal(self) -> None:
        """Switch the file to WAL, retrying while another process holds it.

        Changing the journal mode needs an exclusive lock and SQLite answers "database is locked" at
        once, without its busy handler, when several operators open a fresh file together.
        """
        deadline = time.monotonic() + LOCK_TIMEOUT_S
        while True:
            try:
                self._db.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as e:
                if "locked" not in str(e) or time.monotonic() >= deadline:
                    raise
                time.sleep(0.02)

    def get(self, key: str) -> Versioned | None:
        """The record under ``key``, or None."""
        with self._lock:
            row = self._db.execute("SELECT value, version FROM records WHERE key = ?", (key,)).fetchone()
        return Versioned(json.loads(row[0]), int(row[1])) if row else None

    def cas(self, key: str, value: Any, expected_version: int) -> int | None:
        """Write ``value`` if the version matches; return the new version or None."""
        body = json.dumps(value, sort_keys=True)
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                row = self._db.execute("SELECT version FROM records WHERE key = ?", (key,)).fetchone()
                current = int(row[0]) if row else 0
                if current != expected_version:
                    self._db.execute("ROLLBACK")
                    return None
                self._db.execute("INSERT OR REPLACE INTO records (key, value, version) VALUES (?, ?, ?)",
                                 (key, body, current + 1))
                self._db.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise
        return current + 1

    def list(self, prefix: str) -> dict[str, Versioned]:
        """Every record whose key starts with ``prefix``."""
        with self._lock:
            rows = self._db.execute("SELECT key, value, version FROM records WHERE substr(key, 1, ?) = ?",
                                    (len(prefix), prefix)).fetchall()
        return {k: Versioned(json.loads(v), int(ver)) for k, v, ver in rows}

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()
