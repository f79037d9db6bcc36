"""A worker process's side of an iteration searched in windows (:mod:`solver.search.processes`).

A window is a task: the numbers ``lo < k <= hi`` at the split depth of one iteration (or, with
A*+IDA*, a run of the A* part's open nodes in their order), and what the worker needs to
search them as the parent would: the board, threshold, weight, BPMX, automaton depth, and
how to open the tables (:class:`Recipe`; None: a forked worker has the parent's searcher).
A worker keeps its walk between windows and goes on from where it stopped when its next
window lies ahead; else it walks again from the root (:func:`search_window`).  What it
ends with (:class:`WindowEnd`) says what it searched (:func:`fingerprint`): a worker whose
tables differ from the parent's stops the search with :class:`WorkersDiffer`.

A process's state is here: searchers by recipe (or the parent's, forked), automata by
(shape, depth), the frontier it built last, and each thread's walk (a dask worker runs
windows on several threads).
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from typing import NamedTuple

import numpy as np

from pdb_builder.board import Board, Shape
from pdb_builder.errors import DatabaseError

from ..tuning import tuning
from .state import path_moves, slots
from .threads import Worker

STOPPED = -1  # a window's status when its iteration ended while it ran (a solution, a limit)


class WorkersDiffer(DatabaseError):
    """A worker searched another tree than the parent's (other tables, estimate or
    pruning): a cluster whose workers see another database folder at the parent's path.
    A database error, so a batch stops naming it rather than going on without proofs."""


class Recipe(NamedTuple):
    """How a worker process opens the parent's tables: the shape, the database folder
    (None: the default), whether files are read at all, their checks, and the files left
    out (their paths) as the parent left them out."""

    shape: Shape
    db_dir: str | None = None
    use_db: bool = True
    verify: bool = True
    left_out: tuple[str, ...] = ()

    def searcher(self):
        from .heuristic import manhattan_heuristic
        from .searcher import Searcher

        if not self.use_db:
            return Searcher(manhattan_heuristic(self.shape))
        from .tables import heuristic_for

        left = {path: "left out by the parent" for path in self.left_out}
        return Searcher(heuristic_for(self.shape, self.db_dir, verify=self.verify, left_out=left))


class Window(NamedTuple):
    """One window of one iteration: the numbers ``lo < k <= hi`` at depth ``split``."""

    iteration: str  # the iteration's id: a worker's walk goes on only within the same one
    recipe: Recipe | None  # (None: a forked worker has the parent's searcher)
    cells: tuple
    thresh: int
    weight: int
    bpmx: bool
    split: int
    prune: int  # the automaton's depth
    max_depth: int
    lo: int
    hi: int
    stop: tuple = ()  # how the worker learns that the iteration ended (Workers.begin)
    # A*+IDA*: the numbers are open nodes of the frontier built as this says (FrontierRun.key:
    # its size, the automaton's depth when the parent built it, the depth cap and the ceiling)
    frontier: tuple | None = None


class WindowEnd(NamedTuple):
    """What a window ended with: the kernel's status (found, the iteration done, its window
    passed), its walk's id, the nodes it generated and expanded, its walk's nodes above
    the split depth so far (generated, expanded), the smallest f it pruned, its walk's
    nodes per depth so far, the solution's moves, the numbers its walk met, and what the
    worker searched (:func:`_fingerprint`)."""

    status: int
    walk: str
    nodes: int
    expanded: int
    upper: tuple
    next: int
    counts: np.ndarray
    moves: str | None
    seen: int
    fingerprint: tuple
    seconds: float = 0.0  # the worker's, on this window (a walk from the root included)


# a worker process's state: searchers by recipe (or the parent's, forked), automata by
# (shape, depth), and each thread's walk (a dask worker runs windows on several threads)
_searchers: dict = {}
_automata: dict = {}
_lock = threading.RLock()  # (re-entrant: building a frontier looks up an automaton)
_local = threading.local()
_live: dict = {}  # "number": the iteration under way, in memory the parent shares with the processes it forked
_walks = itertools.count()


def inherit(searcher, fsm=None, live=None) -> None:
    """What the processes this one forks next inherit: ``searcher`` and its automaton
    ``fsm``, and ``live``, the shared number of the iteration under way (None: the
    parent's searcher forgotten)."""
    with _lock:
        _searchers.pop(None, None)
        if searcher is not None:
            _searchers[None] = searcher
            _live["number"] = live
            _automata.clear()
            _automata[(searcher.shape, fsm.depth)] = fsm


def fingerprint(searcher, fsm, h0: int) -> tuple:
    """What a walk searches: the estimate's parts, the root's estimate and the automaton."""
    h = searcher.h
    return (tuple(h.names), h.goal_name, bool(h.use_lc), h0, fsm.depth, fsm.states)


def _searcher_for(recipe: Recipe | None):
    with _lock:
        if recipe not in _searchers:
            if recipe is None:
                raise WorkersDiffer(f"worker process {os.getpid()} has no searcher (it was not forked by the parent)")
            _searchers[recipe] = s = recipe.searcher()
            s.reads.begin()  # its tables hashed in the background: checked before a window's end is reported
        return _searchers[recipe]


def _automaton(searcher, depth: int):
    from .automaton import automaton_for

    if searcher.automaton.depth == depth:
        return searcher.automaton
    with _lock:
        key = (searcher.shape, depth)
        if key not in _automata:
            _automata[key] = automaton_for(searcher.shape, depth)
        return _automata[key]


class _Walk:
    """A worker's walk of one iteration: its root's arrays, stack and state vector (and,
    for A*+IDA*, the frontier it searches below)."""

    def __init__(self, window: Window, fsm=None):
        from . import kernel as K

        self.K = K
        self.slice = tuning().worker_slice  # (this process's: a forked worker's is its parent's at the fork)
        self.iteration = window.iteration
        self.searcher = s = _searcher_for(window.recipe)
        board = Board(s.shape, tuple(window.cells))
        if fsm is None or fsm.depth != window.prune:
            fsm = _automaton(s, window.prune)
        self.tables = s.kernel_tables(fsm)
        # a thread's arrays, as the split search on threads makes them (no second split depth here)
        w = Worker(s, board, window.max_depth, K, int(fsm.roots[board.blank]))
        h0 = w.st.h0 if window.weight == 100 else (w.st.h0 * window.weight) // 100
        w.start(h0, window.thresh, window.split, 0)
        self.w = w
        self.fingerprint = fingerprint(s, fsm, w.st.h0)
        self.frontier = None
        if window.frontier is not None:
            self.frontier = _frontier_of(s, board, window.frontier)
            from .frontier import root_top

            self.top = root_top(board, w.st, int(fsm.roots[board.blank]))
            self.fingerprint += self.frontier.fingerprint()
        self.id = f"{os.getpid()}.{threading.get_ident()}.{next(_walks)}"

    def _slice(self, window: Window) -> int:
        K, w = self.K, self.w
        if self.frontier is None:
            return K.search_slice(w.root, self.tables, w.stack, w.state, self.slice, window.bpmx, w.goal, window.weight)
        from .frontier import frontier_slice

        status = frontier_slice(self.frontier, w, self.tables, self.slice, window.bpmx, window.hi, self.top)
        return K.WINDOW if status == K.ITERATION_DONE else status  # its window done; the walk goes on

    def search(self, window: Window) -> WindowEnd:
        K, v = self.K, slots(self.w.state)
        nodes, expanded = v.nodes, v.expanded
        v.lo, v.hi = window.lo, window.hi
        if self.frontier is not None:
            v.front, v.inside = window.lo, 0
        while True:
            status = self._slice(window)
            if status != K.SLICE_SPENT:
                break
            if _ended(window.stop):  # nobody waits for the rest: its worker goes on to the next window
                status = STOPPED
                break
        moves = path_moves(self.searcher.letters, self.w.stack, v.depth) if status == K.FOUND else None
        return WindowEnd(
            int(status),
            self.id,
            v.nodes - nodes,
            v.expanded - expanded,
            (v.upper_nodes, v.upper_expanded),
            v.next,
            self.w.stack.cnt[: window.max_depth + 1].copy(),
            moves,
            v.seen,
            self.fingerprint,
        )


_frontiers: dict = {}  # (searcher, board, FrontierRun.key) -> the frontier this process built


def _frontier_of(searcher, board, key: tuple):
    """The parent's frontier, built again here once per board (the last one kept)."""
    from .frontier import build_frontier

    size, prune, max_depth, ceiling = key
    with _lock:
        k = (id(searcher), board.cells, key)
        if k not in _frontiers:
            _frontiers.clear()
            fsm = _automaton(searcher, prune)
            _frontiers[k] = build_frontier(searcher, board, size, max_depth, ceiling=ceiling, fsm=fsm)
        return _frontiers[k]


def _ended(stop: tuple) -> bool:
    """Whether the iteration a window belongs to has ended (``stop``: :meth:`Workers.begin`'s)."""
    if not stop:
        return False
    if stop[0] == "number":
        live = _live.get("number")
        return live is not None and int(live[0]) != stop[1]
    from distributed import Event  # ("event", name): a dask cluster's

    return Event(stop[1]).is_set()


def search_window(window: Window, fsm=None) -> WindowEnd:
    """A worker's task: ``window``, on this thread's walk of its iteration
    when that walk has not passed the window's start, else on a new walk from the root
    (``fsm``: the parent's automaton, sent to a cluster's workers so that none learns it again)."""
    t0 = time.perf_counter()
    walk = getattr(_local, "walk", None)
    if walk is None or walk.iteration != window.iteration or slots(walk.w.state).seen > window.lo:
        walk = _local.walk = None  # (the old walk's arrays freed before the new one's are made)
        walk = _local.walk = _Walk(window, fsm)
    end = walk.search(window)
    if window.recipe is not None:
        walk.searcher.reads.wait()  # DatabaseError on a table that fails its checksums
    if end.status != walk.K.WINDOW:  # found, or the iteration's numbers all met: the walk is over
        _local.walk = None
    return end._replace(seconds=time.perf_counter() - t0)
