"""A one-line progress bar on standard error: runs done, runs per second, time left.

Shown only when standard error is a terminal, and only once the work has taken a couple of
seconds (a short run prints nothing); the caller leaves it off for ``--format json``.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

DELAY_SECONDS = 2.0
"""Nothing is drawn before the work has taken this long."""
REFRESH_SECONDS = 0.2


class Progress:
    """Count finished items; draw ``done/total runs, rate/s, ETA`` now and then."""

    def __init__(
        self,
        total: int | None,
        enabled: bool,
        what: str = "runs",
        stream: TextIO | None = None,
    ) -> None:
        self.total = total
        self.enabled = enabled
        self.what = what
        self.stream = stream if stream is not None else sys.stderr
        self.done = 0
        self.started = time.monotonic()
        self._drawn_at = 0.0
        self._shown = False

    def advance(self, n: int = 1) -> None:
        """``n`` more items are finished."""
        self.done += n
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.started < DELAY_SECONDS or now - self._drawn_at < REFRESH_SECONDS:
            return
        self._drawn_at = now
        self._shown = True
        self.stream.write("\r" + self.line(now) + "\x1b[K")
        self.stream.flush()

    def line(self, now: float) -> str:
        """The text of the bar at time ``now`` (``time.monotonic``)."""
        elapsed = max(now - self.started, 1e-9)
        rate = self.done / elapsed
        text = f"{self.done}"
        if self.total:
            share = min(self.done / self.total, 1.0)
            width = 24
            filled = int(share * width)
            bar = "#" * filled + "-" * (width - filled)
            text = f"[{bar}] {self.done}/{self.total}"
        text += f" {self.what}  {rate:,.0f}/s"
        if self.total and rate > 0:
            left = max(self.total - self.done, 0) / rate
            text += f"  ETA {_duration(left)}"
        return text

    def close(self) -> None:
        """Erase the bar (the report follows on standard output)."""
        if self._shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def _duration(seconds: float) -> str:
    seconds = int(seconds + 0.5)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"
