"""What every way of running an IDA* iteration shares, and why it proves what the serial search does.

**Windows in the serial order.**  An iteration's work is numbered in the order the serial
search meets it: the nodes at a split depth (:func:`plan`, chosen from the nodes the last
iteration visited at each depth), or the A* part's open nodes
(:class:`solver.search.frontier.FrontierRun`).  Every backend hands the numbers out in
windows in that order (:class:`Windows`): a thread or a worker process walks down from the
root alike in every walk (BPMX raises no estimate above the split depth from below) and
searches the subtrees of its window's numbers only.  So the walks move through an
iteration together in the serial order, and the last iteration meets its goal after
about the nodes the serial search needs to reach it.

**The proof is the serial one.**  Every number of a completed iteration was searched by
exactly one walk, and the smallest f any walk pruned is the next threshold, so every
iteration is as complete as the serial search's, and the first solution found within a
threshold that every earlier, completed iteration proved is optimal.  A completed
iteration's nodes are the serial search's at the same split depth, the walks above it
counted once (:func:`once`, :func:`merged_counts`).

Here: what an iteration is asked (:class:`IterationSpec`) and how it ended
(:class:`IterationEnd`), and how a source goes out to worker processes (:class:`Deal`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..tuning import tuning

SPLIT_PARTS = 4_000  # the split depth holds at least this share (1/N) of the last iteration's nodes
# (the other numbers that cut an iteration up: solver.tuning)
GROWTH = 4  # how much larger an iteration is planned to be than the last


WINDOWS_EACH = 16  # a worker process's windows in an iteration, about (each a task)


def plan(counts, nodes: int, threads: int, window_nodes: int | None = None) -> tuple[int, int, int]:
    """(split depth, window length, second split depth) for an iteration after one
    that visited ``counts[d]`` nodes at depth ``d`` and ``nodes`` in all: the
    shallowest depth with enough nodes to share out finely, windows of about
    ``window_nodes`` nodes (default: the tuning's), and the shallowest depth below it
    with ``split2_factor`` times as many nodes (0: none, and below ``share_threads``
    threads; :class:`~solver.tuning.Tuning`)."""
    t = tuning()
    window_nodes = t.window_nodes if window_nodes is None else window_nodes
    want = max(t.split_min * threads, nodes // SPLIT_PARTS, 1)
    depths = [d for d in range(1, len(counts)) if counts[d] >= want]
    split = depths[0] if depths else max(range(1, len(counts)), key=lambda d: (counts[d], -d))
    below = max(nodes / max(int(counts[split]), 1), 1.0)  # nodes under a node at the split depth
    deeper = [d for d in range(split + 1, len(counts)) if counts[d] >= t.split2_factor * max(int(counts[split]), 1)]
    split2 = deeper[0] if deeper and threads >= t.share_threads else 0
    return split, max(int(window_nodes / (below * GROWTH)), 1), split2


@dataclass
class IterationEnd:
    """How one iteration of the split search ended (a board's outcome is
    :class:`solver.outcome.Outcome`)."""

    status: str  # "done" (iteration complete), "found" or "limit"
    nodes: int  # generated in this iteration (the nodes above the split depth once)
    expanded: int  # and expanded
    next_threshold: int  # smallest f over the threshold, when done
    counts: np.ndarray  # nodes visited at each depth (for the next iteration's plan)
    moves: str | None = None
    threads: int = 1  # the most that searched at once


class IterationSpec(NamedTuple):
    """One IDA* iteration of a board: its threshold, the estimate's weight and BPMX, the
    deadline (``time.perf_counter()``) and node limit, the nodes generated before it,
    ``last``: the last iteration's (nodes visited per depth, nodes generated), from
    which the split is planned, the stack's depth, and ``fsm``: the pruning automaton
    every thread follows (:mod:`solver.search.automaton`)."""

    thresh: int
    weight: int
    bpmx: bool
    deadline: float | None
    node_limit: int | None
    nodes_before: int
    last: tuple
    max_depth: int
    fsm: object


class Windows:
    """The numbers of an iteration's work handed out in the serial order, ``width`` at a
    time: ``[lo, hi)`` from 0 up to ``end`` (None: until a walk has met them all and says
    how many, :meth:`met`).  Every backend takes its windows from one (under its lock)."""

    def __init__(self, width: int, end: int | None = None):
        self.width, self.end, self.taken = max(int(width), 1), end, 0

    def take(self) -> tuple[int, int] | None:
        """The next window, or None when every number is some walk's."""
        lo = self.taken
        if self.end is not None and lo >= self.end:
            return None
        self.taken = lo + self.width if self.end is None else min(self.end, lo + self.width)
        return lo, self.taken

    def met(self, total: int) -> bool:
        """A walk met ``total`` numbers in all: False where an earlier one met another count."""
        if self.end is not None and self.end != total:
            return False
        self.end = total
        return True


class Deal(NamedTuple):
    """How a source's iteration goes out to worker processes in windows: the windows, the
    split depth (0: a frontier's open nodes), what a worker needs to build the source's
    work again (None: the root), what tells that work apart, and the least f the source
    leaves out of the iteration (the next threshold at most)."""

    windows: Windows
    split: int
    frontier: tuple | None
    fingerprint: tuple
    beyond: int


def merged_counts(cnt: np.ndarray, split: int) -> np.ndarray:
    """Nodes visited at each depth by walks of one iteration (a row each): above the
    split depth every walk meets the same nodes (the longest counts), at it and below
    their parts add up."""
    out = cnt.sum(axis=0)
    out[:split] = cnt[:, :split].max(axis=0)
    return out


def once(total: int, uppers) -> int:
    """``total``, the walks' sum, with their nodes above the split depth (``uppers``, one
    a walk), which each of them walked, counted once."""
    return total - sum(uppers) + max(uppers, default=0)
