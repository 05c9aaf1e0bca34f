"""Drive Debian's headless Chromium from tests: load a page, keep its DOM after scripts ran, its console
messages and a screenshot. Stdlib only: console messages come from Chromium's own log on stderr."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

CANDIDATES = ("chromium", "chromium-browser", "google-chrome")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-breakpad", "--disable-crash-reporter", "--hide-scrollbars", "--enable-logging=stderr", "--v=0")
_CONSOLE = re.compile(r":CONSOLE(?:\(\d+\))?[:\]].*")


def find_chromium() -> str | None:
    """The Chromium executable on PATH, or None."""
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


@dataclass(frozen=True)
class PageLoad:
    """What Chromium saw: the DOM after scripts ran, every console message, and the screenshot's path."""

    dom: str
    console: list[str]
    screenshot: Path | None


def load_page(url: str, *, screenshot: Path | None = None, size: tuple[int, int] = (1400, 2000),
              budget_ms: int = 3000, timeout: float = 90.0) -> PageLoad:
    """Load ``url`` in headless Chromium; any console message (errors included) is captured."""
    exe = find_chromium()
    if exe is None:
        raise RuntimeError("chromium is not installed")
    with tempfile.TemporaryDirectory(prefix="fencepost-chromium-") as profile:
        cmd = [exe, *FLAGS, f"--user-data-dir={profile}", f"--window-size={size[0]},{size[1]}",
               f"--virtual-time-budget={budget_ms}", "--dump-dom"]
        if screenshot is not None:
            cmd.append(f"--screenshot={screenshot}")
        out = subprocess.run([*cmd, url], capture_output=True, text=True, timeout=timeout, check=False,
                             stdin=subprocess.DEVNULL)
    if out.returncode != 0:
        raise RuntimeError(f"chromium exited {out.returncode}: {out.stderr[-2000:]}")
    console = [m.group(0) for line in out.stderr.splitlines() if (m := _CONSOLE.search(line))]
    return PageLoad(out.stdout, console, screenshot)
