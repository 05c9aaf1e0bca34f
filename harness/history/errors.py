"""Problems found while reading or validating a history, each tied to a file and line."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with a history, at ``path:line``."""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        if self.line <= 0:
            return f"{self.path}: {self.message}"
        return f"{self.path}:{self.line}: {self.message}"


class HistoryError(Exception):
    """A history could not be read or is not a valid history; holds every problem found."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))
