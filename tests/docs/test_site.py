"""The documentation site: `mkdocs build --strict` succeeds, and in headless Chromium the home page, the
tutorial's first pages and the CLI reference load with no console message, every internal link and asset on
them answers 200, and every image loads and decodes. The CLI reference lists every subcommand and option
that `fencepost --help` and each `fencepost <sub> --help` show. A page that refers to ../shared fails the
strict build (the hook in docs/_hooks/)."""

from __future__ import annotations

import html
import http.client
import importlib.util
import json
import re
import subprocess
import sys
import threading
import urllib.parse
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.reports.browser import find_chromium, load_page

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
PAGES = ["", "tutorial/", "tutorial/01-processes/", "cli/"]
"""The pages opened in Chromium: home, the tutorial's first two pages, the CLI reference."""
PROBE = "_probe.html"
PROBE_HTML = """<!DOCTYPE html><meta charset="utf-8"><link rel="icon" href="data:,">
<iframe id="f" style="width:1200px;height:900px"></iframe><pre id="out">pending</pre>
<script>
const page = new URLSearchParams(location.search).get("page");
const frame = document.getElementById("f");
frame.addEventListener("load", () => {  // a frame's load comes after its images have loaded or failed
  const rows = [...frame.contentDocument.images].map((img) => [img.src, img.complete ? img.naturalWidth : -1]);
  document.getElementById("out").textContent = "IMAGES " + JSON.stringify(rows);
});
frame.src = page;
</script>
"""
"""A same-origin page that opens a site page in a frame and writes each image's width into its DOM (0: broken)."""

pytestmark = [
    pytest.mark.skipif(not (BIN / "mkdocs").exists(), reason="mkdocs is not installed (the docs extra: make setup)"),
]


def _mkdocs(config: Path, site: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "mkdocs"), "build", "--strict", "-f", str(config), "-d", str(site)],
                          capture_output=True, text=True, timeout=300, check=False, cwd=cwd,
                          stdin=subprocess.DEVNULL, env={"PATH": f"{BIN}:/usr/bin:/bin", "NO_MKDOCS_2_WARNING": "1"})


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """The site built from the repository into a temporary folder, served on 127.0.0.1: (folder, base URL)."""
    out = tmp_path_factory.mktemp("site") / "site"
    built = _mkdocs(REPO / "mkdocs.yml", out, REPO)
    assert built.returncode == 0, built.stdout + built.stderr
    (out / PROBE).write_text(PROBE_HTML, encoding="utf-8")
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(out)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield out, f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def _get(url: str) -> tuple[int, str, bytes]:
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=10)
    try:
        conn.request("GET", parts.path or "/")
        response = conn.getresponse()
        return response.status, response.getheader("Content-Type") or "", response.read()
    finally:
        conn.close()


def _internal_refs(dom: str, page_url: str, base: str) -> dict[str, set[str]]:
    """The page's links, images, stylesheets and scripts on this server (fragments dropped), by kind."""
    refs: dict[str, set[str]] = {"a": set(), "img": set(), "asset": set()}
    for tag, value in re.findall(r"<(a|img|link|script)\b[^>]*?\s(?:href|src)=\"([^\"]*)\"", dom):
        url = urllib.parse.urljoin(page_url, html.unescape(value)).split("#", 1)[0]
        if url.startswith(base):
            refs[tag if tag in ("a", "img") else "asset"].add(url)
    return refs


@pytest.mark.skipif(find_chromium() is None, reason="Debian's chromium is not installed (apt-get install chromium)")
@pytest.mark.parametrize("page", PAGES, ids=[p or "home" for p in PAGES])
def test_a_page_loads_cleanly_with_its_links_and_images(site: tuple[Path, str], page: str) -> None:
    _, base = site
    url = base + page
    loaded = load_page(url)
    assert loaded.console == [], loaded.console
    assert "</article>" in loaded.dom  # Material rendered the page's content
    refs = _internal_refs(loaded.dom, url, base)
    assert refs["a"], "the page links nothing"
    for ref in sorted(refs["a"] | refs["img"] | refs["asset"]):
        status, _, _ = _get(ref)
        assert status == 200, f"{ref} on {url}: {status}"
    for ref in sorted(refs["img"]):
        status, kind, body = _get(ref)
        assert kind.startswith("image/") and body, f"{ref}: {kind}"
    probe = load_page(f"{base}{PROBE}?page=/{page}")
    assert probe.console == [], probe.console
    found = re.search(r"IMAGES (\[.*?\])</pre>", html.unescape(probe.dom))
    assert found, "the probe did not finish"
    widths = dict(json.loads(found.group(1)))
    assert set(widths) == refs["img"]
    assert all(w > 0 for w in widths.values()), widths


def test_the_home_page_shows_a_report_with_a_caught_bug(site: tuple[Path, str]) -> None:
    folder, _ = site
    home = (folder / "index.html").read_text(encoding="utf-8")
    assert re.search(r'<img [^>]*src="report-real-bug.png"', home)
    assert "INVALID" in home


def _help(*path: str) -> str:
    out = subprocess.run([str(BIN / "fencepost"), *path, "--help"], capture_output=True, text=True, timeout=60,
                         check=False, stdin=subprocess.DEVNULL)
    assert out.returncode == 0, out.stderr
    return out.stdout


def _section(text: str, title: str) -> list[str]:
    """The lines of a help text's section (``Options:``, ``Commands:``), up to the next section."""
    lines = text.splitlines()
    if f"{title}:" not in lines:
        return []
    start = lines.index(f"{title}:") + 1
    end = next((i for i in range(start, len(lines)) if lines[i] and not lines[i][0].isspace()), len(lines))
    return lines[start:end]


def _options(text: str) -> list[str]:
    """Every option name a help text shows (``-h``, ``--help``, ``--clean``, ``--no-clean``...)."""
    names: list[str] = []
    for line in _section(text, "Options"):
        if line.startswith("  -"):
            spec = re.split(r"\s{2,}", line.strip(), maxsplit=1)[0]
            names += re.findall(r"(?<![\w-])--?[\w][\w-]*", spec)
    return names


def _commands(text: str) -> list[str]:
    return [line.split()[0] for line in _section(text, "Commands") if line.startswith("  ") and line.strip()]


def _help_tree() -> dict[tuple[str, ...], list[str]]:
    """Every command path that the help texts show, with the options its own help shows."""
    tree: dict[tuple[str, ...], list[str]] = {}
    level: list[tuple[str, ...]] = [()]
    with ThreadPoolExecutor(max_workers=4) as pool:
        while level:
            texts = list(pool.map(lambda path: _help(*path), level))
            children: list[tuple[str, ...]] = []
            for path, text in zip(level, texts, strict=True):
                tree[path] = _options(text)
                children += [(*path, name) for name in _commands(text)]
            level = children
    return tree


def _cli_sections(page_text: str) -> dict[tuple[str, ...], str]:
    """The CLI page's text cut at each command heading (``fencepost cluster admin¶``), by command path."""
    sections: dict[tuple[str, ...], str] = {}
    parts = re.split(r"^(fencepost(?: [\w-]+)*)¶$", page_text, flags=re.MULTILINE)
    for heading, body in zip(parts[1::2], parts[2::2], strict=True):
        sections[tuple(heading.split()[1:])] = body
    return sections


@pytest.mark.skipif(find_chromium() is None, reason="Debian's chromium is not installed (apt-get install chromium)")
def test_the_cli_reference_lists_every_command_and_option(site: tuple[Path, str]) -> None:
    _, base = site
    dom = load_page(base + "cli/").dom
    text = html.unescape(re.sub(r"<[^>]+>", "", dom))
    sections = _cli_sections(text)
    tree = _help_tree()
    top = _commands(_help())
    assert {"check", "test", "matrix", "report"} <= set(top)  # check comes from checkers/, an entry point
    assert len(tree) > len(top) + 1  # nested groups (cluster, cluster admin, image) were walked
    for path, options in sorted(tree.items()):
        assert path in sections, f"`fencepost {' '.join(path)}` is not on the CLI page"
        missing = [o for o in options if not re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", sections[path])]
        assert not missing, f"`fencepost {' '.join(path)}`: {missing} not on the CLI page"
    assert set(sections) == set(tree), "the CLI page documents a command that --help does not show"


def _hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location("repo_links", REPO / "docs" / "_hooks" / "repo_links.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_page_that_refers_to_shared_fails_the_strict_build(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# Home\n\nSee `../shared/seeds/` for the design.\n")
    config = tmp_path / "mkdocs.yml"
    config.write_text(f"site_name: t\nstrict: true\nhooks:\n  - {REPO / 'docs' / '_hooks' / 'repo_links.py'}\n")
    built = _mkdocs(config, tmp_path / "site", tmp_path)
    assert built.returncode != 0
    assert "index.md:3 refers to ../shared" in built.stderr
    assert not [p for p in (REPO / "docs").rglob("*.md") if "../shared" in p.read_text(encoding="utf-8")]


def test_links_to_repository_files_become_text_and_other_links_stay(tmp_path: Path) -> None:
    hook = _hook()
    docs = REPO / "docs"
    page = docs / "tutorial" / "index.md"
    markdown = ("[api](../../harness/checker_protocol.py) [plugins](../plugins.md) [gone](../../no/such.py) "
                "[web](https://etcd.io) ![pic](../index.png)\n"
                "```python\n[api](../../harness/checker_protocol.py)\n```\n")
    out = hook.unlink_repo_files(markdown, page, docs, REPO)
    assert out.splitlines()[0] == ("api [plugins](../plugins.md) [gone](../../no/such.py) [web](https://etcd.io) "
                                   "![pic](../index.png)")
    assert "```python\n[api](../../harness/checker_protocol.py)\n```" in out  # code is never touched
    assert hook.shared_references("a\nsee ../shared/x\n") == [2]

