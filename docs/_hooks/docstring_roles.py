"""MkDocs hook: the docstrings' cross-reference roles, shown as code on the generated API page.

Fencepost's docstrings name other code with Sphinx's roles (``:class:`Cluster```, ``:func:`~harness.x.f```),
which read well in an editor and in ``help()``. mkdocstrings renders a docstring as Markdown, where such a
role comes out as the literal role name before a code span (``:class:<code>Cluster</code>``). This hook
drops the role name, and shortens a ``~``-prefixed path to its last part, as Sphinx would.
"""

from __future__ import annotations

import re
from typing import Any

ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|data|attr|exc|obj|const):<code>(?P<tilde>~?)(?P<name>[^<]+)</code>")


def strip_roles(html: str) -> str:
    """``html`` with each rendered role reduced to its code span."""
    def code(m: re.Match[str]) -> str:
        name = m["name"].rsplit(".", 1)[-1] if m["tilde"] else m["name"]
        return f"<code>{name}</code>"
    return ROLE.sub(code, html)


def on_page_content(html: str, **_: Any) -> str:
    """MkDocs' hook: every page's HTML, roles stripped (only generated API text has them)."""
    return strip_roles(html)
