"""Where PostgreSQL's binaries are: the one lookup both the plugin (on this machine) and the launcher (inside
a node's image) use."""

from __future__ import annotations

import glob
import shutil
from pathlib import Path


def newest_bin_dir() -> str | None:
    """The newest Debian PostgreSQL binaries folder (``/usr/lib/postgresql/<version>/bin``, by version number),
    else the folder of a ``postgres`` on PATH, else None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"),
                   key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0)
    if found:
        return str(Path(found[-1]).parent)
    on_path = shutil.which("postgres")
    return str(Path(on_path).parent) if on_path else None
