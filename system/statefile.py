"""Small JSON files written atomically: temp file, fsync, rename, fsync of the directory."""

from __future__ import annotations

import json
import os
from typing import Any


def write_atomic(path: str, obj: Any) -> None:
    """Replace ``path`` with ``obj`` as JSON so that a crash leaves either the old or the new file."""
    directory = os.path.dirname(os.path.abspath(path))
    tmp = f"{path}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, json.dumps(obj, sort_keys=True).encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    dfd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def read_json(path: str) -> Any:
    """The JSON value in ``path``, or None if the file does not exist."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        return None
