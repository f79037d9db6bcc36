"""A*+IDA* (Bu & Korf, IJCAI 2019): a bounded breadth of the search kept in memory, then
IDA* from each of its open nodes.

**The A* part.**  An IDA* iteration to a bound B, run by the kernel with a frontier
buffer, expands every node within B (children in L R U D order, the pruning automaton
followed) and writes each child over B to the buffer: its depth, estimate, arrangement and
path.  Of the rows for one arrangement only the shallowest is kept, and of those the first
path in L R U D order.  The bound starts at the root's estimate and rises iteration by
iteration while the arrangements kept stay within :attr:`size`; the last bound that fits
gives the frontier.  An iteration that meets the goal answers the board: every lower one
completed without it.

**The IDA* part.**  Each threshold T searches, in order of f and then of h, every frontier
node with f <= T: the kernel walks down its path from the root (each move forced) and searches
its subtree to T.  The next threshold is the least f over T met below a node or among the
frontier nodes left.  A solution found at T after every lower threshold completed over every
frontier node is optimal, as with IDA* alone.

**Why the automaton may prune below a frontier node.**  Let w be the first optimal
solution in length-then-letter order; no automaton prunes it (see
:mod:`pdb_builder.automaton`).  Let X be w's first node over B; every node before it is
within B, so the iteration to B walked w's prefix and wrote X with it.  No row for X is
shallower (w would not be optimal) nor as deep with an earlier path (that path and the rest
of w would be an earlier optimal solution), so X keeps w's prefix, and the walk down it
reaches the automaton's state w has there, whatever automaton the search has by then.
Another path kept that an automaton prunes loses a duplicate, never w.

Nodes count as the kernel counts them, the walks down the frontier paths included.  When a
search goes on by A*+IDA*: ``Searcher.frontier`` (N open nodes from the root), or by default
after a long IDA* iteration where it was measured to pay
(:func:`solver.search.driver.frontier_pays`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..tuning import tuning
from .limits import raise_if_stopping
from .sources import WINDOWS_EACH, Deal, IterationSpec, Windows
from .state import new_stack, new_state, path_moves, slots, start_iteration
from .threads import Pool, Worker

ROWS_PER_NODE = 2  # buffer rows per frontier node kept: duplicates are written before they are removed
CHUNK = 64  # frontier nodes a thread takes at a time
FRONTIER_WINDOW = 4096  # frontier nodes a worker process's window holds at most
DEADLINE_SLICE = 200_000  # nodes between looks at the clock under a time limit (a few hundredths of a second)


@dataclass
class Frontier:
    """The open nodes of the A* part, in order of f, then h, then path: each one's forced
    moves (``paths[i, :plen[i]]``, the neighbour index at each depth; ``plen`` is its
    depth), f, and how many first moves its path shares with the next one's; ``bound``: the
    bound of the iteration that wrote them (completed; None: the root alone); what the A*
    part generated and expanded (every bound tried, the one over the size included);
    ``moves``: the answer where an iteration met the goal, else None; ``stopped``: a limit
    stopped it; ``done``: the bounds completed, (bound, nodes, seconds) each."""

    paths: np.ndarray
    plen: np.ndarray
    share: np.ndarray
    f: np.ndarray
    bound: int | None
    nodes: int
    expanded: int
    moves: str | None
    stopped: bool
    done: list

    def __len__(self) -> int:
        return len(self.f)

    def upto(self, thresh: int, inf: int) -> tuple[int, int]:
        """How many open nodes a threshold ``thresh`` admits (the first ones), and the
        least f of those it leaves (``inf`` where it admits them all)."""
        hi = int(np.searchsorted(self.f, thresh, side="right"))
        return hi, int(self.f[hi]) if hi < len(self.f) else inf

    def fingerprint(self) -> tuple:
        """What tells two builds apart: the size, the bound and every node's f and path."""
        return (len(self), self.bound, int(self.f.sum()), hash(self.paths.tobytes()))


def root_top(board, st, fsm_root: int) -> np.ndarray:
    """What :func:`~solver.search.kernel.frontier_slice` sets at the root before a walk from
    it: the blank's cell, the estimate, the automaton's state, the Manhattan and line-conflict
    parts (``st``: the root's :class:`~solver.search.state.Root`)."""
    return np.array([board.blank, st.h0, fsm_root, st.md, st.lc], dtype=np.int64)


def _kept(rows: np.ndarray, n: int) -> np.ndarray:
    """The indices of the rows kept: one per arrangement, the shallowest, then the first
    path in L R U D order (neighbour indices at one cell keep that order)."""
    key = np.ascontiguousarray(rows[:, 2 : 2 + n])
    comb = np.ascontiguousarray(np.concatenate([key, rows[:, :1], rows[:, 2 + n :]], axis=1))
    order = np.argsort(comb.view(np.dtype((np.void, comb.shape[1]))).ravel(), kind="stable")
    keys = key[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = (keys[1:] != keys[:-1]).any(axis=1)
    return order[first]


def _shared(paths: np.ndarray, plen: np.ndarray) -> np.ndarray:
    """How many first moves each path shares with the next (0 for the last).  Neither is
    a prefix of the other (a frontier node's ancestors were all expanded), so the first
    difference comes before the shorter one ends."""
    share = np.zeros(len(plen), dtype=np.int64)
    if len(plen) > 1:
        differ = paths[1:] != paths[:-1]
        first = np.where(differ.any(axis=1), differ.argmax(axis=1), paths.shape[1])
        share[:-1] = np.minimum(first, np.minimum(plen[1:], plen[:-1]) - 1).clip(0)
    return share


def _ordered(rows: np.ndarray, n: int) -> tuple:
    """The kept rows as a frontier: paths, their lengths and f, in order of f, then h, then
    the path (nodes one after another share their walk down, and its reads are cached)."""
    g = rows[:, 0].astype(np.int64)
    h = rows[:, 1].astype(np.int64)
    paths = np.ascontiguousarray(rows[:, 2 + n :])
    byway = np.argsort(paths.view(np.dtype((np.void, paths.shape[1]))).ravel(), kind="stable")
    way = np.empty(len(byway), dtype=np.int64)
    way[byway] = np.arange(len(byway))
    order = np.lexsort((way, h, g + h))
    return paths[order], g[order], g[order] + h[order]


def _bound(searcher, board, bound: int, rows: int, max_depth: int, tables, fsm, limits: tuple, counts: tuple):
    """The kernel's iteration to ``bound`` with a frontier buffer of ``rows`` rows (bpmx off:
    every node within the bound is expanded): (status, stack, the view of its state vector)."""
    from . import kernel as K

    deadline, node_limit = limits
    st = searcher.root_state(board)  # afresh: a full buffer leaves the root's arrays mid-path
    stack = new_stack(max_depth, searcher.ngroups, emit=(rows, 3 + searcher.shape.n + bound))
    state = new_state()
    start_iteration(st, board.blank, st.h0, bound, stack, state, searcher.fsm_root(board, fsm))
    v = slots(state)
    v.nodes, v.expanded = counts
    while True:
        most = tuning().slice_nodes
        slice_nodes = most if node_limit is None else min(most, node_limit - v.nodes)
        if slice_nodes <= 0:
            return K.SLICE_SPENT, stack, v
        status = K.search_slice(st.arrays(), tables, stack, state, slice_nodes, False, searcher.goal, 100)
        raise_if_stopping()
        if status != K.SLICE_SPENT or (deadline is not None and time.perf_counter() >= deadline):
            return status, stack, v


def build_frontier(
    searcher, board, size: int, max_depth: int, deadline=None, node_limit=None, ceiling=None, fsm=None
) -> Frontier:
    """The A* part for ``board`` on ``searcher`` (with the automaton ``fsm``, else the
    searcher's as it is), at most ``size``
    frontier nodes, every bound below ``ceiling`` (a known answer's length, or None); stops
    early (``stopped``) at ``deadline`` (perf_counter) or after ``node_limit`` nodes."""
    from . import kernel as K

    n = searcher.shape.n
    fsm = fsm or searcher.automaton
    tables = searcher.kernel_tables(fsm)
    h0 = searcher.root_state(board).h0
    bound, top = h0, min(max_depth, ceiling or max_depth)
    nodes = expanded = 0
    best, last, moves, stopped = None, None, None, False
    done: list = []
    kept: list = []  # frontier nodes kept at each bound
    while bound < top:
        began = time.perf_counter()
        status, stack, v = _bound(
            searcher,
            board,
            bound,
            ROWS_PER_NODE * size + 1,
            max_depth,
            tables,
            fsm,
            (deadline, node_limit),
            (nodes, expanded),
        )
        spent, nodes, expanded = v.nodes - nodes, v.nodes, v.expanded
        if status == K.FOUND:
            moves = path_moves(searcher.letters, stack, v.depth)
        stopped = status == K.SLICE_SPENT
        if status != K.ITERATION_DONE:
            break
        rows = stack.emit[: v.emitted]
        keep = _kept(rows, n)
        if len(keep) > size:
            break
        done.append((bound, spent, round(time.perf_counter() - began, 4)))
        best, last = _ordered(rows[keep], n), bound
        kept.append(len(keep))
        bound = v.next
        # the next bound's frontier as this one grew on the last: over the size, not tried
        if len(kept) > 1 and kept[-1] * kept[-1] > size * max(kept[-2], 1):
            break
    if best is None:  # not even the root's bound fits: the root alone, nothing forced
        best = (np.zeros((1, 1), np.uint8), np.zeros(1, np.int64), np.array([h0], dtype=np.int64))
    paths, plen, f = best
    return Frontier(paths, plen, _shared(paths, plen), f, last, nodes, expanded, moves, stopped, done)


class FrontierIteration(Pool):
    """One threshold of IDA* below the A* part's open nodes, on the threads' pool
    (:class:`solver.search.threads.Pool`): a window is :data:`CHUNK` open nodes in the
    frontier's order, the f of those past the threshold bounding the next one."""

    def __init__(self, run: FrontierRun, searcher, board, share, spec: IterationSpec):
        from .kernel import INF

        self.source, self.fr = run, run.fr
        hi, left_f = self.fr.upto(spec.thresh, INF)
        self.windows = Windows(CHUNK, hi)
        thresh, _, bpmx, deadline, limit, before, _, depth, fsm = spec
        super().__init__(searcher, board, share, thresh, 100, bpmx, deadline, limit, before, fsm, depth)
        self.next = left_f
        self.top = root_top(board, self.workers[0].st, self.fsm_root)  # (read only: every thread's root alike)

    def worker(self, me: int) -> Worker:
        arrays = self.source.arrays  # (kept from one threshold to the next)
        while len(arrays) <= me:
            arrays.append(Worker(self.s, self.board, self.max_depth, self.K, self.fsm_root))
        return arrays[me]

    def begin(self, w: Worker, me: int) -> bool:
        w.state[:] = 0
        v = slots(w.state)
        v.thresh, v.next = self.thresh, self.K.INF
        w.stack.cnt[:] = 0
        w.read()
        return self._take(w, me=me)

    def _take(self, w: Worker, finished: bool = False, me: int = 0) -> bool:
        with self.cond:
            got = None if self.stop else self.windows.take()
            if got is None:
                return False
            lo, w.end = got
        v = slots(w.state)
        v.front, v.inside = lo, 0
        return True

    def slice(self, w: Worker, nodes: int) -> int:
        return frontier_slice(self.fr, w, self.tables, nodes, self.bpmx, w.end, self.top)

    def slice_nodes(self) -> int:
        return tuning().slice_nodes if self.deadline is None else DEADLINE_SLICE


def frontier_slice(fr: Frontier, w, tables, nodes: int, bpmx: bool, end: int, top) -> int:
    """The kernel on ``w``'s walk (a :class:`~solver.search.threads.Worker`'s arrays) below
    the open nodes of ``fr`` up to number ``end``, for at most ``nodes`` nodes: its status."""
    from . import kernel as K

    return K.frontier_slice(
        w.root, tables, w.stack, w.state, nodes, bpmx, w.goal, 100, fr.paths, fr.plen, fr.share, end, top
    )


class FrontierRun:
    """A*+IDA* as a work source of the driver's iterations: the A* part built once
    (:func:`build_frontier`, with a known answer's length as its ``ceiling``), then each
    threshold IDA* below its open nodes, on this process's threads (:meth:`on_threads`) or
    in windows on worker processes (:meth:`on_workers`; each builds the same frontier once,
    from :attr:`key`).  The driver's one threshold loop drives it
    (:class:`solver.search.driver.Drive`): the same proof as IDA*'s."""

    def __init__(self, searcher, board, size: int, max_depth: int, deadline, node_limit, ceiling):
        built = searcher.automaton  # (what the workers build their frontier with: the key)
        self.fr = build_frontier(searcher, board, size, max_depth, deadline, node_limit, ceiling)
        self.key = (size, built.depth, max_depth, ceiling)
        self.arrays: list = []  # each thread's arrays (solver.search.threads.Worker), kept between thresholds

    def kept(self) -> int:
        """Open nodes kept (0: the A* part found the answer itself)."""
        return 0 if self.fr.moves is not None else len(self.fr)

    def start(self, floor: int) -> int:
        """The first threshold: the least f of the open nodes, or ``floor`` where an
        earlier search proved more (of the same parity: every f of a board has it)."""
        first = int(self.fr.f[0])
        return max(first, floor - (floor - first) % 2)

    def stopped_bound(self, floor: int, h0: int) -> int:
        """What the A* part proved when a limit stopped it: past every bound it completed
        (the next one keeps the estimate's parity), or ``floor``."""
        return max(floor, self.fr.done[-1][0] + 2 if self.fr.done else h0)

    def on_threads(self, searcher, board, share, spec: IterationSpec) -> FrontierIteration:
        return FrontierIteration(self, searcher, board, share, spec)

    def on_workers(self, count: int, spec: IterationSpec, inf: int) -> Deal:
        hi, left_f = self.fr.upto(spec.thresh, inf)
        width = max(1, min(FRONTIER_WINDOW, -(-hi // (count * WINDOWS_EACH))))
        return Deal(Windows(width, hi), 0, self.key, self.fr.fingerprint(), left_f)
