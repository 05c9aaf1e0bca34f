"""The run's fencepost.log: the harness's records, not a line per HTTP request of a plugin's client."""

from __future__ import annotations

import logging
from pathlib import Path

from harness.logs import run_logging


def test_http_client_chatter_stays_out_and_warnings_get_in(tmp_path: Path) -> None:
    log = tmp_path / "fencepost.log"
    with run_logging(log) as ours:
        ours.info("setup done")
        logging.getLogger("httpx").info('HTTP Request: POST http://127.0.0.1:2379/v3/kv/put "HTTP/1.1 200 OK"')
        logging.getLogger("httpx").warning("connection pool is full")
    text = log.read_text()
    assert "setup done" in text and "connection pool is full" in text
    assert "HTTP Request" not in text
    assert logging.getLogger("httpx").level == logging.NOTSET, "the level is given back after the run"
