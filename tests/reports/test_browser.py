"""Headless Chromium renders the reports, the index and a campaign page with no console messages,
and the verdict can be seen (its banner colour is on screen)."""

from __future__ import annotations

import http.client
import re
import shutil
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.store import RunDir, RunStore
from reports.render import write_report
from reports.server import StoreServer, start_in_thread
from tests.reports.browser import find_chromium, load_page
from tests.reports.sample_runs import make_run
from tests.reports.test_render import V0_RUN

pytestmark = [
    pytest.mark.skipif(find_chromium() is None,
                       reason="Debian's chromium is not installed (apt-get install chromium; .ci/run installs it)"),
    pytest.mark.slow,
]

BANNER_RGB = {"valid": (0x1A, 0x7F, 0x37), "invalid": (0xCF, 0x22, 0x2E), "unchecked": (0x6E, 0x77, 0x81)}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[StoreServer, dict[str, RunDir]]]:
    store = RunStore(tmp_path_factory.mktemp("browser") / "store")
    runs = {"valid": make_run(store, campaign="demo"), "invalid": make_run(store, invalid=True, campaign="demo")}
    shutil.copytree(V0_RUN, store.root / "register-basic" / V0_RUN.name)
    runs["unchecked"] = RunDir(store.root / "register-basic" / V0_RUN.name)
    for run in runs.values():
        write_report(run.path)
    server, thread = start_in_thread(store.root)
    try:
        yield server, runs
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def _status(server: StoreServer, path: str) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        conn.request("HEAD", path)
        return conn.getresponse().status
    finally:
        conn.close()


def _colour_share(png: Path, rgb: tuple[int, int, int], top: int = 400) -> float:
    import numpy as np
    from PIL import Image

    with Image.open(png) as img:
        pixels = np.asarray(img.convert("RGB"), dtype=np.int16)[:top]
    near = (np.abs(pixels - np.array(rgb, dtype=np.int16)) <= 6).all(axis=2)
    return float(near.mean())


@pytest.mark.parametrize("verdict", ["valid", "invalid", "unchecked"])
def test_a_report_renders_cleanly_with_its_verdict_visible(site: tuple[StoreServer, dict[str, RunDir]],
                                                           verdict: str, tmp_path: Path) -> None:
    server, runs = site
    run = runs[verdict]
    base = f"/{run.path.parent.name}/{run.path.name}/"
    page = load_page(server.url.rstrip("/") + base + "report.html", screenshot=tmp_path / "report.png")
    assert page.console == []
    assert f'id="verdict" data-verdict="{verdict}"' in page.dom
    assert f'<span class="word">{verdict.upper()}</span>' in page.dom
    assert _colour_share(tmp_path / "report.png", BANNER_RGB[verdict]) > 0.02  # the banner is on screen
    html = run.report_path.read_text(encoding="utf-8")
    refs = set(re.findall(r'(?:src|href)="([^"#:?]+)"', html))
    assert refs, "the report links nothing"
    for ref in sorted(refs):
        assert _status(server, urllib.parse.urljoin(base, ref)) == 200, ref


def test_the_index_sorts_filters_and_shows_every_run(site: tuple[StoreServer, dict[str, RunDir]],
                                                     tmp_path: Path) -> None:
    server, _ = site
    page = load_page(server.url, screenshot=tmp_path / "index.png", size=(1400, 900))
    assert page.console == []
    assert 'data-ready="1"' in page.dom  # the script ran to its end
    assert "3 of 3 runs shown" in page.dom
    assert _colour_share(tmp_path / "index.png", BANNER_RGB["invalid"], top=900) > 0.0005
    filtered = load_page(server.url + "?verdict=invalid")
    assert filtered.console == [] and "1 of 3 runs shown" in filtered.dom
    assert filtered.dom.count("hidden") >= 2
    searched = load_page(server.url + "?q=register-basic")
    assert "1 of 3 runs shown" in searched.dom


def test_the_campaign_page_renders_cleanly(site: tuple[StoreServer, dict[str, RunDir]]) -> None:
    server, _ = site
    page = load_page(server.url + "_campaign/demo")
    assert page.console == []
    assert 'data-verdict="invalid" data-count="1"' in page.dom and 'data-verdict="valid" data-count="1"' in page.dom


def test_console_errors_are_caught(tmp_path: Path) -> None:
    bad = tmp_path / "bad.html"
    bad.write_text('<!DOCTYPE html><link rel="icon" href="data:,"><p id="p">x</p>'
                   "<script>document.getElementById('p').textContent = 'ran'; notDefined();</script>",
                   encoding="utf-8")
    page = load_page(bad.as_uri())
    assert any("Uncaught ReferenceError: notDefined" in m for m in page.console)
    assert '<p id="p">ran</p>' in page.dom
