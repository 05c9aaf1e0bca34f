"""The metadata store interface shared by every backend."""

from __future__ import annotations

from typing import Any, NamedTuple, Protocol


class Versioned(NamedTuple):
    """A record's JSON value and its version (1 after creation, +1 per successful write)."""

    value: Any
    version: int


class MetadataStore(Protocol):
    """Linearizable versioned records. Calls block; the operator runs them in a thread."""

    def get(self, key: str) -> Versioned | None:
        """The record under ``key``, or None."""
        ...

    def cas(self, key: str, value: Any, expected_version: int) -> int | None:
        """Write ``value`` if the record's version is ``expected_version`` (0: it must not exist).

        Returns the new version, or None if the version did not match (nothing was written).
        """
        ...

    def list(self, prefix: str) -> dict[str, Versioned]:
        """Every record whose key starts with ``prefix``."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...
