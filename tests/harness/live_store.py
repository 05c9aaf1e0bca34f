"""Poll a run store while a harness is writing to it."""

from __future__ import annotations

from pathlib import Path


def run_files(store: Path, name: str) -> list[Path]:
    """``STORE/<test>/<run>/<name>`` files that exist now.

    The harness swaps ``STORE/latest`` through a short-lived ``.latest.<pid>`` link, and folders
    appear while we look, so hidden entries are skipped and anything that vanishes mid-scan is ignored.
    """
    found: list[Path] = []
    try:
        tests = [p for p in store.iterdir() if not p.name.startswith(".") and p.name != "latest" and p.is_dir()]
    except FileNotFoundError:
        return found
    for test_dir in tests:
        try:
            found.extend(p / name for p in test_dir.iterdir() if (p / name).is_file())
        except FileNotFoundError:
            continue
    return sorted(found)
