"""Progress of ``solve`` and ``run`` on a terminal (:mod:`pdb_builder.progress`).

A file of boards: a bar of the boards finished and proven, with the time left; each
finished board's line is printed above it.  One board: a live line of the search, its
threshold, nodes, rate and time, redrawn as the search goes (the fallback's steps
named).  Off a terminal, or with ``-q``, none of it: only the per-board lines.
"""

from __future__ import annotations

import logging

from pdb_builder.progress import bar, on_terminal


def _shown(stream) -> bool:
    return on_terminal(stream) and logging.getLogger().level < logging.ERROR


class Progress:
    """The boards bar: ``update(outcome)`` after each board; ``clear()`` before printing
    anything else on the terminal; ``close()`` at the end."""

    def __init__(self, total: int, stream=None, enabled: bool | None = None):
        self.enabled = (total > 1 and _shown(stream)) if enabled is None else enabled
        self.proven = 0
        self.seen: dict[int, bool] = {}  # index -> proven
        self.bar = None
        if self.enabled:
            self.bar = bar(
                total=total,
                file=stream,
                unit=" boards",
                bar_format="{n_fmt}/{total_fmt} boards{postfix} |{bar}| {elapsed} elapsed, {remaining} left",
                postfix="0 proven",
            )

    def update(self, outcome) -> None:
        """A board's outcome; a later one of the same board (a retry) counts once."""
        optimal = outcome.proven
        first = outcome.index not in self.seen
        self.proven += optimal - self.seen.get(outcome.index, False)
        self.seen[outcome.index] = optimal
        if self.bar is not None:
            self.bar.set_postfix_str(f"{self.proven} proven", refresh=False)
            self.bar.update(int(first))

    def clear(self) -> None:
        if self.bar is not None:
            self.bar.clear()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


class SearchLine:
    """One board's live line: :meth:`search` after each slice of the optimal search,
    :meth:`phase` as the fallback's steps begin (the pool hands these to its searchers,
    :class:`solver.api.SolverPool`)."""

    def __init__(self, stream=None, enabled: bool | None = None):
        self.enabled = _shown(stream) if enabled is None else enabled
        self.stream = stream
        self.bar = None
        self.last = 0  # the nodes of the search last shown (a new search starts from 0)
        self.what = "optimal search"

    def _bar(self, desc: str):
        if self.bar is None:
            self.bar = bar(
                desc=desc,
                file=self.stream,
                unit=" nodes",
                unit_scale=True,
                mininterval=0.2,
                bar_format="{desc}: {n_fmt} nodes, {rate_fmt}, {elapsed} elapsed",
            )
        return self.bar

    def search(self, threshold: int, nodes: int) -> None:
        if not self.enabled:
            return
        desc = f"{self.what}, threshold {threshold}"
        b = self._bar(desc)
        b.set_description_str(desc, refresh=False)
        b.update(nodes - self.last if nodes >= self.last else nodes)
        self.last = nodes

    def phase(self, what: str) -> None:
        if self.enabled:
            self.what, self.last = what, 0
            self._bar(what).set_description_str(what)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
