"""The one error the transactional checker raises: a history it cannot read as transactions."""

from __future__ import annotations


class MalformedTxn(ValueError):
    """A micro-op (or a transaction's value) that is not what the workload's format says.

    ``str()`` is one line; the CLI prints ``FILE:LINE: message`` and exits 3.

    Attributes:
        message: what is wrong, in words.
        index: the op's ``index`` in the history.
        line: the op's line in its file, when known.
    """

    def __init__(self, message: str, index: int | None = None, line: int | None = None) -> None:
        self.message = message
        self.index = index
        self.line = line
        super().__init__(message)

    def __str__(self) -> str:
        return self.message

    def where(self, source: str | None) -> str:
        """``FILE:LINE: message`` (or as much of it as is known)."""
        if source and self.line:
            return f"{source}:{self.line}: {self.message}"
        if source:
            return f"{source}: {self.message}"
        return self.message
