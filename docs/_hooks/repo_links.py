"""MkDocs hook for Fencepost's site: links to the repository's own files, and no links to ``../shared``.

Pages are read in two places: on the built site and as Markdown in the repository (on a forge, in an
editor). A link from a page to a source file, such as ``[api.py](../../harness/plugin_api.py)``, works
in the repository but has no target on the site, where ``mkdocs build --strict`` would refuse it. This
hook turns each such link into its text on the site when the file exists in the repository, so the
link stays useful in the repository; a link to a file that does not exist is left alone, and the strict
build still fails on it.

A page must never refer to ``../shared``: that folder is beside the working tree of Fencepost's
developers, not in the repository, so a reader who clones it does not have it. Each reference is a
warning, which fails the strict build.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

log = logging.getLogger("mkdocs.hooks.repo_links")

LINK = re.compile(r"(?<!!)\[(?P<text>[^\]\n]+)\]\((?P<target>[^)\s]+)\)")
FENCE = re.compile(r"^([ \t]*(?:```|~~~))", re.MULTILINE)
FORBIDDEN = "../shared"


def unlink_repo_files(markdown: str, page_path: Path, docs_dir: Path, repo_dir: Path) -> str:
    """``markdown`` with each link to an existing repository file outside ``docs_dir`` replaced by its text.

    Args:
        markdown: the page's Markdown.
        page_path: the page's source file (links are relative to its folder).
        docs_dir: the site's source folder; links into it are left to MkDocs.
        repo_dir: the repository root; only files inside it are unlinked.

    Returns:
        The Markdown, unchanged outside links (fenced code blocks are never touched).
    """
    docs_dir, repo_dir = docs_dir.resolve(), repo_dir.resolve()

    def replace(m: re.Match[str]) -> str:
        target = m.group("target")
        if "://" in target or target.startswith(("#", "/", "mailto:")):
            return m.group(0)
        path = (page_path.parent / target.split("#", 1)[0]).resolve()
        if path.is_relative_to(docs_dir) or not path.is_relative_to(repo_dir) or not path.exists():
            return m.group(0)
        return m.group("text")

    parts = FENCE.split(markdown)
    # FENCE.split keeps each fence marker; text between an odd number of markers is inside a block.
    out: list[str] = []
    inside = False
    for part in parts:
        if FENCE.fullmatch(part):
            inside = not inside
            out.append(part)
        else:
            out.append(part if inside else LINK.sub(replace, part))
    return "".join(out)


def shared_references(markdown: str) -> list[int]:
    """The line numbers (from 1) of ``markdown`` that refer to ``../shared``."""
    return [n for n, line in enumerate(markdown.splitlines(), start=1) if FORBIDDEN in line]


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """MkDocs event: warn about ``../shared`` references, then unlink repository files."""
    source = Path(page.file.abs_src_path)
    for line in shared_references(markdown):
        log.warning("%s:%d refers to %s, which a reader of the repository does not have",
                    page.file.src_uri, line, FORBIDDEN)
    docs_dir = Path(config["docs_dir"])
    repo_dir = Path(config["config_file_path"]).parent
    return unlink_repo_files(markdown, source, docs_dir, repo_dir)
