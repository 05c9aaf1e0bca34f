"""Send the harness's own log records to the run's fencepost.log while a run lasts."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

QUIET = ("httpx", "httpcore")
"""Libraries that log every request at INFO (a plugin's HTTP client: a line per operation); only their
warnings reach the run's log."""


@contextmanager
def run_logging(path: Path, level: int = logging.INFO) -> Iterator[logging.Logger]:
    """Attach a file handler for ``path`` to the root logger for the duration of the block."""
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    old_level = root.level
    quiet = {name: logging.getLogger(name).level for name in QUIET}
    root.addHandler(handler)
    root.setLevel(min(level, old_level) if old_level else level)
    for name in QUIET:
        logging.getLogger(name).setLevel(max(logging.WARNING, quiet[name]))
    try:
        yield logging.getLogger("fencepost")
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
        for name, was in quiet.items():
            logging.getLogger(name).setLevel(was)
        handler.close()
