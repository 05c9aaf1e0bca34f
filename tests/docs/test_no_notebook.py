"""The product code is no lab notebook: its comments and docstrings name no commits.

Why the code is the way it is belongs in the code, said generally; which commit, seed or run showed it
belongs in CHANGELOG.md, docs/bugs.md and docs/results/, where figures are dated and can be measured again.
A commit hash in the code goes stale the day it is written and tells a reader nothing they can check there.
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PRODUCT = ("fencepost", "harness", "system", "nemesis", "workloads", "checkers", "reports", "plugins",
           "examples/toy_kv")
"""The folders of product code (the tests under tests/ are not product code)."""
HASH = re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b")
"""A token that looks like a commit hash: 7 to 40 lowercase hex characters, at least one a digit and at
least one a letter, as a whole word (so plain numbers such as 1000000 do not match)."""
ALLOWED: frozenset[str] = frozenset()
"""Tokens that match :data:`HASH` but are not commits (a hex constant in code), each with a comment saying
what it is. None today."""


def product_files() -> list[Path]:
    """Every product .py file, compiled caches aside."""
    return sorted(p for folder in PRODUCT for p in (REPO / folder).rglob("*.py") if "__pycache__" not in p.parts)


def test_no_commit_hashes_in_product_code() -> None:
    files = product_files()
    assert len(files) > 100, f"found only {len(files)} product files under {REPO}"
    found = [f"{path.relative_to(REPO)}:{n}: {m.group()}"
             for path in files
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             for m in HASH.finditer(line) if m.group() not in ALLOWED]
    assert not found, ("commit hashes in the product code (say why generally; put the commit and its figures in "
                       "CHANGELOG.md or docs/bugs.md):\n" + "\n".join(found))
