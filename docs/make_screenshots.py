"""Regenerate the screenshots in docs/ from realistic sample runs: ``.venv/bin/python docs/make_screenshots.py``.

Needs Debian's chromium. Builds a throwaway store (a valid run, an invalid run, an old unchecked run and
a small campaign), renders the reports, serves the store on loopback and photographs the pages.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from harness.store import RunStore  # noqa: E402
from reports.render import write_report  # noqa: E402
from reports.server import start_in_thread  # noqa: E402
from tests.reports.browser import load_page  # noqa: E402
from tests.reports.sample_runs import make_run  # noqa: E402
from tests.reports.test_render import V0_RUN  # noqa: E402


def main() -> None:
    """Build the sample store and write report-valid.png, report-invalid.png and index.png."""
    with tempfile.TemporaryDirectory(prefix="fencepost-docs-") as tmp:
        store = RunStore(Path(tmp) / "store")
        shutil.copytree(V0_RUN, store.root / "register-basic" / V0_RUN.name)
        write_report(store.root / "register-basic" / V0_RUN.name)
        for seed in (11, 12):
            write_report(make_run(store, seed=seed, campaign="nightly-2024-05-01", plots=False).path)
        write_report(make_run(store, invalid=True, seed=13, campaign="nightly-2024-05-01", plots=False).path)
        valid = make_run(store)
        invalid = make_run(store, invalid=True)
        for run in (valid, invalid):
            write_report(run.path)
        server, thread = start_in_thread(store.root)
        try:
            for run, name in ((valid, "report-valid.png"), (invalid, "report-invalid.png")):
                url = f"{server.url}{run.path.parent.name}/{run.path.name}/report.html"
                page = load_page(url, screenshot=HERE / name)
                assert not page.console, page.console
            page = load_page(server.url, screenshot=HERE / "index.png", size=(1400, 800))
            assert not page.console, page.console
        finally:
            server.shutdown()
            server.server_close()
            thread.join(timeout=5)
    for name in ("report-valid.png", "report-invalid.png", "index.png"):
        print(HERE / name)


if __name__ == "__main__":
    main()
