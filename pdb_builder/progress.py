"""Progress on a terminal, shared by the builder's and the solver's commands.

Bars and live lines are drawn with tqdm on standard error, only when it is a terminal
(never into a pipe, a file or a log, where the commands write plain lines instead),
and tqdm is imported only when one is drawn (about 40 ms), so a quick command pays
nothing for it.
"""

from __future__ import annotations

import os
import sys

SHOW_AFTER = 0.5  # seconds before a bar is first drawn: short work stays quiet ($SLIDEPDB_PROGRESS_AFTER)


def on_terminal(stream=None) -> bool:
    """Whether ``stream`` (default: standard error) is a terminal a bar can be drawn on."""
    stream = sys.stderr if stream is None else stream
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or closed
        return False


def bar(**kw):
    """A tqdm bar on standard error (unless ``file`` is given) that leaves no line behind
    and is first drawn after :data:`SHOW_AFTER` seconds (``$SLIDEPDB_PROGRESS_AFTER``, where
    set: 0 draws it at once)."""
    from tqdm import tqdm

    kw["file"] = kw.get("file") or sys.stderr
    kw.setdefault("delay", float(os.environ.get("SLIDEPDB_PROGRESS_AFTER", SHOW_AFTER)))
    kw.setdefault("leave", False)
    kw.setdefault("dynamic_ncols", True)
    return tqdm(**kw)


class PatternBars:
    """``slidepdb build`` on a terminal: a bar per pattern BFS, its placements valued
    against the pattern's placements, with the time left; fed the builder's per-layer
    progress (:func:`pdb_builder.api.build_reports`)."""

    def __init__(self, stream=None):
        self.stream = stream
        self.totals: list[int] = []
        self.current = None  # (name, pattern index)
        self.bar = None

    def partition(self, totals: list[int]) -> None:
        """A new partition: ``totals[i]``, pattern i's placements."""
        self.close()
        self.totals = list(totals)

    def layer(self, name: str, i: int, valued: int) -> None:
        if self.current != (name, i):
            self.close()
            self.current = (name, i)
            total = self.totals[i] if i < len(self.totals) else None
            self.bar = bar(
                total=total,
                desc=f"{name} pattern {i + 1}/{len(self.totals)}",
                unit=" placements",
                unit_scale=True,
                file=self.stream,
            )
        self.bar.update(valued)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        self.bar, self.current = None, None
