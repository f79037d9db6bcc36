"""An overall progress line for runs over many boards, on a terminal only.

``solve`` and ``run`` print one line per finished board; on a terminal the last line
of standard error also shows boards done, proven, elapsed time and an estimate of what
is left, redrawn as each board finishes.  Off a terminal (a pipe, a file, a log) only
the per-board lines are written, as before.
"""

from __future__ import annotations

import sys
import time


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


class Progress:
    """``update(outcome)`` after each board; ``clear()`` before printing anything else
    on the terminal (the line is redrawn at the next update); ``close()`` at the end."""

    def __init__(self, total: int, stream=None, enabled: bool | None = None, already: int = 0):
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = (total > 1 and self.stream.isatty()) if enabled is None else enabled
        self.total, self.done, self.proven = total, 0, 0
        self.already = already  # finished before this run (resumed): not part of the rate
        self.t0 = time.perf_counter()
        self.shown = False

    def line(self) -> str:
        elapsed = time.perf_counter() - self.t0
        new = self.done - self.already
        left = self.total - self.done
        eta = f", about {_clock(elapsed / new * left)} left" if new > 0 and left > 0 else ""
        return f"[{self.done}/{self.total} boards, {self.proven} proven] {_clock(elapsed)} elapsed{eta}"

    def update(self, outcome) -> None:
        self.done += 1
        self.proven += bool(outcome.extra.get("optimal"))
        if self.enabled:
            self.stream.write("\r\033[K" + self.line())
            self.stream.flush()
            self.shown = True

    def clear(self) -> None:
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self.shown = False

    def close(self) -> None:
        self.clear()
