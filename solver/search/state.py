"""What a search keeps and returns, below every module that searches.

:class:`SearchResult` (what :class:`~solver.search.searcher.Searcher.solve` and the
plain-Python first search return), :class:`Root` (a board's arrays and the
incremental state of its estimate, which the kernel updates move by move),
:class:`Stack` (the kernel's rows per depth) and :func:`start_iteration` (a
kernel's stack and state vector at the root of a fresh iteration, for one thread or
many).  The searcher (:mod:`solver.search.searcher`) and the threads
(:mod:`solver.search.threads`) both build on these, so neither imports the other
for them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np


@dataclass
class SearchResult:
    moves: str | None
    length: int | None
    optimal: bool
    lower_bound: int
    nodes: int
    seconds: float
    status: str  # "solved", "limit" or "unsolvable" (from :func:`~solver.search.searcher.ida_star` only)
    heuristic: list[str] = field(default_factory=list)
    h0: int = 0
    expanded: int = 0  # nodes whose children were generated (``nodes`` counts the children)
    # the IDA* iterations this search completed, (threshold, nodes, seconds) each, and
    # the one a limit stopped (None: none), what the next attempt at the board costs
    # (:mod:`solver.run.forecast`)
    iterations: list = field(default_factory=list)
    unfinished: tuple | None = None
    threads: int = 1  # the most threads that searched at once
    # A*+IDA* (solver.search.frontier): (open nodes kept, the A* part's nodes, its bounds
    # completed: the first of ``iterations``); None: IDA* alone
    frontier: tuple | None = None


class Backend:
    """Where a search's large iterations run: this process's threads
    (:class:`solver.search.threads.Threads`), or worker processes of this machine or of a
    dask cluster (:class:`solver.search.processes.Workers`).  One operation: search an
    iteration from a work source (the root's split depth, or the A* part's open nodes:
    ``source.on_threads`` / ``source.on_workers``) and say how it ended
    (:class:`~solver.search.threads.IterationEnd`).  Here, below the searcher and every
    backend, so that the driver holds one without knowing which."""

    count: int = 1  # windows it searches at once
    recipe: bool = False  # whether a window must say how to open the tables
    alone: bool = False  # one thread, ever: the driver never splits an iteration
    grows: bool = False  # threads may join while an iteration runs

    def iteration(self, searcher, board, spec, source=None):
        raise NotImplementedError


@dataclass
class Root:
    """A search's root: the board's arrays and the incremental state of its estimate
    (lookup values and ranks, group sums, Manhattan and linear-conflict parts), which
    the kernel updates move by move and restores on the way back."""

    cells: np.ndarray
    pos: np.ndarray
    buf: np.ndarray
    lc_lines: np.ndarray
    lk_rank: np.ndarray
    lk_used: np.ndarray
    lk_slotof: np.ndarray
    lk_val: np.ndarray
    group_sum: np.ndarray
    md: int
    lc: int
    h0: int

    def arrays(self) -> tuple:
        """The kernel's ``root`` argument."""
        return (
            self.cells,
            self.pos,
            self.lk_val,
            self.group_sum,
            self.lc_lines,
            self.lk_rank,
            self.lk_used,
            self.lk_slotof,
            self.buf,
        )


class Stack(NamedTuple):
    """The kernel's ``stack`` argument: one row per depth (the kernel unpacks it in
    this order)."""

    blank: np.ndarray  # the blank's cell
    it: np.ndarray  # next child to visit (-1: not expanded)
    n: np.ndarray  # children kept
    ch: np.ndarray  # kept children's estimates, sorted
    ck: np.ndarray  # kept children (neighbour index)
    h: np.ndarray  # the node's estimate (BPMX raises it)
    kh: np.ndarray  # each child's estimate
    ci: np.ndarray  # each child's table index per group
    cv: np.ndarray  # and value
    old: np.ndarray  # what a move changed
    cnt: np.ndarray  # nodes visited at each depth this iteration
    path: np.ndarray  # the child taken at each depth
    fsm: np.ndarray  # the pruning automaton's state (solver.search.automaton)
    emit: np.ndarray  # frontier rows the kernel writes (none: no frontier; solver.search.frontier)


# the kernel's int64 state vector, slot by slot, in its order (solver.search.kernel numbers
# them S_DEPTH, S_THRESH, ...; tests/test_kernel_face.py holds the two to one order):
# depth, threshold and the next one (the least f over it); nodes generated and expanded
# (children generated); the Manhattan and linear-conflict parts at the node.  A split
# search (solver.search.threads, processes): the split depth (0: none), the window [lo, hi)
# of the nodes numbered there in the serial order, how many met so far (seen), the nodes
# above it (upper_nodes, upper_expanded); a second split depth in a shared node (split2,
# lo2, hi2, seen2; shared: that node's number; entry: the nodes generated when it was
# entered).  A frontier node (solver.search.frontier): plen forced moves; emitted, the
# rows written to the frontier buffer; front, the node under way over a list of them,
# inside (1: in its subtree, 2: between two), floor (the depth a search ends at).
SLOTS = (
    "depth", "thresh", "next", "nodes", "md", "lc", "expanded", "split", "lo", "hi", "seen",
    "upper_nodes", "upper_expanded", "split2", "lo2", "hi2", "seen2", "shared", "entry",
    "plen", "emitted", "front", "inside", "floor",
)  # fmt: skip
STATE_SIZE = len(SLOTS)


class Slots:
    """The one typed view of a kernel's state vector (``array``, what the kernel is
    handed): each slot of :data:`SLOTS` read as an int and written by its name
    (``slots(state).nodes``, ``slots(state).lo = 0``).  Nothing outside this module and
    the kernel indexes the vector."""

    __slots__ = ("array",)

    def __init__(self, array: np.ndarray):
        self.array = array


def _slot(i: int, name: str) -> property:
    def get(self) -> int:
        return int(self.array[i])

    def put(self, value) -> None:
        self.array[i] = value

    return property(get, put, doc=f"slot {i} of the kernel's state vector: {name}")


for _i, _name in enumerate(SLOTS):
    setattr(Slots, _name, _slot(_i, _name))


def slots(state: np.ndarray) -> Slots:
    """The typed view of the state vector ``state``."""
    return Slots(state)


def new_state() -> np.ndarray:
    """A zeroed kernel state vector, alone on its cache lines (:func:`private`)."""
    return private(STATE_SIZE)


PAD = 128  # bytes kept clear before and after an array a thread writes (two cache lines)


def private(shape, dtype=np.int64) -> np.ndarray:
    """A zeroed array that one search thread writes node after node, alone
    on its cache lines: small arrays allocated one after another lie side by side, and
    threads writing neighbouring arrays would take each line from one another's caches
    (false sharing)."""
    dtype = np.dtype(dtype)
    size = int(np.prod(shape))
    pad = -(-PAD // dtype.itemsize)
    base = np.zeros(size + 2 * pad, dtype=dtype)
    return base[pad : pad + size].reshape(shape)


def private_copy(a: np.ndarray) -> np.ndarray:
    """``a``'s values in a :func:`private` array."""
    out = private(a.shape, a.dtype)
    out[...] = a
    return out


def new_stack(max_depth: int, ngroups: int, emit: tuple = (0, 0)) -> Stack:
    """A kernel stack with one row per depth up to ``max_depth``, for ``ngroups`` groups
    (``emit``: the shape of its frontier buffer, :mod:`solver.search.frontier`)."""
    rows, groups = max_depth + 2, max(ngroups, 1)
    return Stack(
        blank=private(rows),
        it=private(rows),
        n=private(rows),
        ch=private((rows, 4)),
        ck=private((rows, 4)),
        h=private(rows),
        kh=private((rows, 4)),
        ci=private((rows, 4, groups)),
        cv=private((rows, 4, groups)),
        old=private((rows, 4 + 2 * groups)),
        cnt=private(rows),
        path=private(rows),
        fsm=private(rows),
        emit=private(emit, np.uint8),
    )


def path_moves(letters: np.ndarray, stack: Stack, depth: int) -> str:
    """The moves on a kernel stack's path, from its root down to ``depth``
    (``letters[c, k]``: the move letter of cell ``c``'s ``k``-th neighbour)."""
    return "".join(letters[stack.blank[i], stack.path[i]] for i in range(depth))


def start_iteration(
    root: Root, blank: int, h0: int, thresh: int, stack: Stack, state: np.ndarray, fsm_root: int, split: int = 0
):
    """A kernel's ``stack`` and ``state`` at the root of a fresh iteration to ``thresh``
    (``blank``: the board's blank cell; ``h0``: the root's estimate; ``split``: the
    depth whose nodes are shared out between threads, :mod:`solver.search.threads`;
    0 for none; ``fsm_root``: the pruning automaton's state at the root,
    :attr:`~solver.search.automaton.Automaton.roots` of ``blank``)."""
    from .kernel import INF

    stack.blank[0] = blank
    stack.it[0] = -1  # not expanded yet
    stack.h[0] = h0
    stack.fsm[0] = fsm_root
    stack.cnt[:] = 0  # nodes visited per depth
    state[:] = 0
    v = slots(state)
    v.thresh, v.next, v.md, v.lc, v.split = thresh, INF, root.md, root.lc, split
