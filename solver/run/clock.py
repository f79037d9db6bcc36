"""The one clock of ``slidepdb run``: every reading of the time and every wait in
:mod:`solver.run` goes through a :class:`Clock` the run is handed (budgets, last starts,
sittings, forecasts, rounds, a board's and a build's seconds), so that tests hand a
:class:`FakeClock` and check the budget's arithmetic exactly, with no process racing the
real clock.

``now()`` is wall-clock seconds since the epoch: what journals record as a board's end
and sittings span across processes and sittings.  ``tick()`` is a monotonic count for
durations within one process.  A worker process measures its board's share of a core
on :data:`SYSTEM` (a fake clock does not cross into another process)."""

from __future__ import annotations

import time


class Clock:
    """The machine's clock."""

    def now(self) -> float:
        """Wall-clock seconds since the epoch."""
        return time.time()

    def tick(self) -> float:
        """A monotonic count of seconds, for durations within this process."""
        return time.perf_counter()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


class FakeClock(Clock):
    """A clock that moves only when told: :meth:`advance`, or a :meth:`sleep`; each
    reading also moves it by ``step`` seconds (0: time stands still between moves).
    Both readings count the same seconds."""

    def __init__(self, start: float = 1_000_000.0, step: float = 0.0):
        self.t = float(start)
        self.step = step

    def now(self) -> float:
        self.t += self.step
        return self.t

    def tick(self) -> float:
        return self.now()

    def sleep(self, seconds: float) -> None:
        self.advance(seconds)

    def advance(self, seconds: float) -> float:
        self.t += seconds
        return self.t


SYSTEM = Clock()  # the clock a run reads unless it is handed another
