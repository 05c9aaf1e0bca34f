"""Exit codes shared by ``fencepost test`` and ``fencepost check``."""

from __future__ import annotations

VALID = 0
INVALID = 1
UNKNOWN = 2
ERROR = 3


def for_validity(valid: bool | str) -> int:
    """Map a verdict (True, False or "unknown") to its exit code."""
    if valid is True:
        return VALID
    if valid is False:
        return INVALID
    return UNKNOWN


def worst(codes: list[int]) -> int:
    """The worst verdict's code: error 3, then invalid 1, then unknown 2, then valid 0."""
    for code in (ERROR, INVALID, UNKNOWN):
        if code in codes:
            return code
    return VALID
