"""The live progress display of ``fencepost test``: time left, ops/s, outcome counts, active faults."""

from __future__ import annotations

import time
from types import TracebackType

from rich.console import Console
from rich.live import Live
from rich.text import Text

from harness.client_workers import Tally


class ProgressDisplay:
    """A one-line live status on a terminal; on anything else, a plain line every few seconds."""

    def __init__(self, console: Console | None = None, plain_every: float = 5.0) -> None:
        self.console = console or Console(stderr=True)
        self._live: Live | None = None
        self._plain_every = plain_every
        self._last_plain = 0.0
        self._last_total = 0
        self._last_time = time.monotonic()
        self._rate = 0.0

    def __enter__(self) -> ProgressDisplay:
        if self.console.is_terminal:
            self._live = Live(Text(""), console=self.console, refresh_per_second=4, transient=True)
            self._live.__enter__()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._live is not None:
            self._live.__exit__(exc_type, exc, tb)

    def line(self, tally: Tally, elapsed: float, total: float) -> str:
        """The status line."""
        now = time.monotonic()
        done = sum(tally.outcomes.values())
        if now - self._last_time >= 1.0:
            self._rate = (done - self._last_total) / (now - self._last_time)
            self._last_total, self._last_time = done, now
        left = max(0.0, total - elapsed)
        faults = ", ".join(sorted(tally.active_faults)) or "none"
        o = tally.outcomes
        return (f"{left:5.0f}s left  {self._rate:6.0f} ops/s  ok {o['ok']}  fail {o['fail']}  info {o['info']}"
                f"  faults: {faults}")

    def __call__(self, tally: Tally, elapsed: float, total: float) -> None:
        """Update the display (the runtime calls this about twice a second)."""
        text = self.line(tally, elapsed, total)
        if self._live is not None:
            self._live.update(Text(text))
        elif time.monotonic() - self._last_plain >= self._plain_every:
            self._last_plain = time.monotonic()
            self.console.print(text, highlight=False)
