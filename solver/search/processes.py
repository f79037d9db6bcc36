"""One IDA* iteration searched by worker processes: this machine's, or a dask cluster's.

As on threads (:mod:`solver.search.threads`), the nodes at a split depth are numbered
in the order the serial search meets them, and each number is searched by exactly one
walk: a walk goes down from the root alike in every process (BPMX raises no estimate
above the split depth) and searches the subtrees of the numbers in its window only.  Here
each window is a task: the parent hands them out in the serial order, a few ahead of
each worker, and gathers what each ended with (nodes, the smallest f over the threshold,
a solution).  A worker keeps its walk between windows and goes on from where it stopped
when its next window lies ahead; else it walks again from the root.  So the parent only
hands out numbers and adds up; the workers search.  With A*+IDA*
(:mod:`solver.search.frontier`) the numbers are the open nodes of the frontier instead: each
worker builds the parent's frontier once (the same nodes in the same order, checked with the
tables), and a window is a run of them in the frontier's order.

The proof is the serial one: every number of a completed iteration was searched once,
and the smallest f any walk pruned is the next threshold, so every iteration is as
complete as the serial search's, and a solution found within a threshold that every
earlier, completed iteration proved is optimal.  A completed iteration's nodes are the
serial search's at the same split depth, the walks above it counted once (a walk
again from the root is work the node count leaves out).  What the workers search must be
what the parent would: each window says the estimate's names, the root's estimate and the
automaton's depth and states, and a worker whose tables differ stops the search with
:class:`WorkersDiffer`; every walk that ends an iteration must count the same numbers.

Where the windows run (:class:`Workers`): ``Workers.local(n)`` forks ``n`` processes of this
machine that inherit the parent's searcher and automaton (the tables are memory-mapped, so
they share one copy), and forks them again when either changes; ``Workers.cluster(client)``
sends windows to a dask cluster's workers (the same ``--scheduler`` ``slidepdb run`` takes),
each of which opens the tables of the same database folder once (:class:`Recipe`) and keeps
them for the next windows.  A limit stops handing out windows; those running end at their next slice
(a fraction of a second), so a node limit may be passed by those.
"""

from __future__ import annotations

import itertools
import os
import queue
import threading
import time
import uuid
from typing import NamedTuple

import numpy as np

from pdb_builder.board import Board, Shape
from pdb_builder.errors import DatabaseError
from pdb_builder.words import plural

from ..tuning import tuning
from .limits import raise_if_stopping
from .state import Backend, path_moves, slots
from .threads import GROWTH, IterationEnd, IterationSpec, Worker, merged_counts, once, plan

WINDOWS_EACH = 16  # and small enough that an iteration holds this many windows a worker
AHEAD = 2  # windows handed to each worker beyond the one it runs (its next window is there when it asks)
STOPPED = -1  # a window's status when its iteration ended while it ran (a solution, a limit)
FRONTIER_WINDOW = 4096  # frontier nodes a window holds at most (A*+IDA*)


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
    frontier: FrontierKey | None = None  # A*+IDA*: the numbers are frontier nodes (solver.search.frontier)


class FrontierKey(NamedTuple):
    """How a worker builds the parent's frontier again (:func:`~solver.search.frontier.build_frontier`:
    the same size, automaton depth, depth cap and ceiling give the same nodes in the same order)."""

    size: int
    prune: int  # the automaton's depth when the parent built it
    max_depth: int
    ceiling: int | None


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
_lock = threading.Lock()
_local = threading.local()
_live: dict = {}  # "number": the iteration under way, in memory the parent shares with the processes it forked
_walks = itertools.count()


def _fingerprint(searcher, fsm, h0: int) -> tuple:
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
        self.root, self.stack, self.state, self.goal = w.root, w.stack, w.state, w.goal
        self.fingerprint = _fingerprint(s, fsm, w.st.h0)
        self.frontier = None
        if window.frontier is not None:
            self.frontier = _frontier_of(s, board, window.frontier)
            from .frontier import root_top

            self.top = root_top(board, w.st, int(fsm.roots[board.blank]))
            self.fingerprint += frontier_fingerprint(self.frontier)
        self.id = f"{os.getpid()}.{threading.get_ident()}.{next(_walks)}"

    def _slice(self, window: Window) -> int:
        K, fr = self.K, self.frontier
        if fr is None:
            return K.search_slice(
                self.root, self.tables, self.stack, self.state, self.slice, window.bpmx, self.goal, window.weight
            )
        status = K.frontier_slice(
            self.root, self.tables, self.stack, self.state, self.slice, window.bpmx, self.goal, 100,
            fr.paths, fr.plen, fr.share, window.hi, self.top,
        )  # fmt: skip
        return K.WINDOW if status == K.ITERATION_DONE else status  # its window done; the walk goes on

    def search(self, window: Window) -> WindowEnd:
        K, v = self.K, slots(self.state)
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
        moves = path_moves(self.searcher.letters, self.stack, v.depth) if status == K.FOUND else None
        return WindowEnd(
            int(status),
            self.id,
            v.nodes - nodes,
            v.expanded - expanded,
            (v.upper_nodes, v.upper_expanded),
            v.next,
            self.stack.cnt[: window.max_depth + 1].copy(),
            moves,
            v.seen,
            self.fingerprint,
        )


_frontiers: dict = {}  # (searcher, board, FrontierKey) -> the frontier this process built


def _frontier_of(searcher, board, key: FrontierKey):
    """The parent's frontier, built again here once per board (the last one kept)."""
    from .frontier import build_frontier

    with _lock:
        k = (id(searcher), board.cells, key)
        if k not in _frontiers:
            _frontiers.clear()
            fsm = _automaton(searcher, key.prune)
            _frontiers[k] = build_frontier(searcher, board, key.size, key.max_depth, ceiling=key.ceiling, fsm=fsm)
        return _frontiers[k]


def frontier_fingerprint(fr) -> tuple:
    """What tells two builds of a frontier apart: its size, bound and every node's f and path."""
    return (len(fr), fr.bound, int(fr.f.sum()), hash(fr.paths.tobytes()))


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
    if walk is None or walk.iteration != window.iteration or slots(walk.state).seen > window.lo:
        walk = _local.walk = None  # (the old walk's arrays freed before the new one's are made)
        walk = _local.walk = _Walk(window, fsm)
    end = walk.search(window)
    if window.recipe is not None:
        walk.searcher.reads.wait()  # DatabaseError on a table that fails its checksums
    if end.status != walk.K.WINDOW:  # found, or the iteration's numbers all met: the walk is over
        _local.walk = None
    return end._replace(seconds=time.perf_counter() - t0)


class IterationWindows(NamedTuple):
    """What one iteration's windows cost: their number, the workers' seconds in them (all
    added), the longest one's, and the iteration's wall seconds in the parent."""

    thresh: int
    windows: int
    busy: float
    longest: float
    wall: float


class Workers(Backend):
    """Where one board's windows run: ``count`` workers, each taking one window at a time,
    reached through ``submit(fn, window)`` (a future with ``add_done_callback``, ``result``
    and ``cancel``, as :mod:`concurrent.futures` and dask make them).  ``recipe``: whether
    a window must say how to open the tables (a cluster's workers), or the workers have the
    parent's searcher already (forked)."""

    def __init__(self, count: int, submit, recipe: bool, ready=None, close=None, where: str = "", begin=None):
        self.log: list[IterationWindows] = []  # every iteration they searched
        self.count = max(int(count), 1)
        self.submit = submit
        self.recipe = recipe
        self._ready = ready
        self._begin = begin
        self._close = close
        self.where = where

    def run_iteration(self, searcher, board, spec: IterationSpec) -> IterationEnd:
        """One iteration of ``board``'s search with ``searcher`` (:func:`run_iteration`)."""
        return run_iteration(searcher, board, self, spec, searcher.recipe)

    def run_frontier(self, searcher, board, fr, key: tuple, thresh: int, deadline, left) -> tuple:
        """One threshold of A*+IDA*'s IDA* part, the nodes of frontier ``fr`` (built as ``key``
        says: :class:`FrontierKey`) searched in windows: as
        :meth:`solver.search.frontier.FrontierSearch.iteration` returns it."""
        hi, left_f = fr.upto(thresh, _kernel().INF)
        fsm = searcher.automaton
        spec = IterationSpec(thresh, 100, searcher.bpmx, deadline, left, 0, (None, 0), key[2], fsm)
        out = run_iteration(searcher, board, self, spec, searcher.recipe, (FrontierKey(*key), fr, hi))
        return out.status, out.moves, out.nodes, out.expanded, min(out.next_threshold, left_f)

    def begin(self):
        """An iteration starts: what its windows carry to learn when it ends, and the call
        that ends it (its windows still running stop at their next slice)."""
        if self._begin is None:
            return (), lambda: None
        return self._begin()

    def ready(self, searcher, fsm) -> None:
        """Before the windows of an iteration searched with ``searcher`` and ``fsm``."""
        if self._ready is not None:
            self._ready(searcher, fsm)

    def close(self) -> None:
        if self._close is not None:
            self._close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @classmethod
    def local(cls, processes: int) -> Workers:
        """``processes`` worker processes of this machine, forked from this one as an
        iteration needs them (again when its searcher or automaton changes: the children
        inherit both, and the memory-mapped tables are shared)."""
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        held = {"pool": None, "key": None}
        live = np.frombuffer(mp.get_context("fork").RawArray("q", 1), dtype=np.int64)  # (shared with the children)
        numbers = itertools.count(1)

        def begin():
            live[0] = n = next(numbers)
            return ("number", n), lambda: live.__setitem__(0, 0)

        def ready(searcher, fsm):
            key = held["key"]
            if key is not None and key[0] is searcher and key[1] is fsm:
                return
            close()
            _searchers.clear()
            _searchers[None] = searcher  # what the children inherit
            _live["number"] = live
            _automata.clear()
            _automata[(searcher.shape, fsm.depth)] = fsm
            held["pool"] = ProcessPoolExecutor(processes, mp_context=mp.get_context("fork"))
            held["key"] = (searcher, fsm)

        def submit(fn, window):
            return held["pool"].submit(fn, window)

        def close():
            if held["pool"] is not None:
                held["pool"].shutdown(wait=True, cancel_futures=True)
            held["pool"] = held["key"] = None
            _searchers.pop(None, None)

        where = f"on {plural(processes, 'process', 'processes')}"
        return cls(processes, submit, recipe=False, ready=ready, close=close, where=where, begin=begin)

    @classmethod
    def cluster(cls, client) -> Workers:
        """A dask cluster's workers (a ``distributed.Client``): as many windows at once as
        they have threads."""
        from ..distributed import worker_threads, workers

        record = workers(client)
        threads, count = worker_threads(record), len(record)

        sent = {"fsm": None, "future": None}

        def ready(searcher, fsm):
            if sent["fsm"] is not fsm:  # sent once to every worker (up to 128 MB; learning it takes seconds)
                sent["future"] = client.scatter(fsm, broadcast=True, hash=False)
                sent["fsm"] = fsm

        def submit(fn, window):
            return client.submit(fn, window, sent["future"], pure=False)

        def begin():
            from distributed import Event

            event = Event(f"slidepdb-{uuid.uuid4().hex}", client=client)
            return ("event", event.name), event.set

        where = f"on {plural(count, 'dask worker')}"
        return cls(threads, submit, recipe=True, ready=ready, where=where, begin=begin)


def run_iteration(
    searcher, board, workers: Workers, spec: IterationSpec, recipe: Recipe | None = None, frontier=None
) -> IterationEnd:
    """One iteration of ``board``'s search (``spec``) from its root, its windows searched
    by ``workers`` (``recipe``: how a cluster's worker opens the tables).  With ``frontier``
    (``(key, frontier, hi)``: a :class:`FrontierKey`, the parent's frontier and how many of
    its nodes the threshold admits) the numbers are those frontier nodes, in their order."""
    thresh, weight, bpmx, deadline, node_limit, nodes_before, last, max_depth, fsm = spec
    if workers.recipe and recipe is None:
        raise ValueError("a cluster's workers need the recipe of the searcher's tables")
    t0 = time.perf_counter()
    h0 = searcher.root_state(board).h0
    expected = _fingerprint(searcher, fsm, h0)
    total = None  # the numbers at the split depth, once a walk has met them all
    key = None
    if frontier is None:
        t = tuning()
        window_nodes = min(
            t.window_max_nodes, max(t.window_min_nodes, int(last[1] * GROWTH / (workers.count * WINDOWS_EACH)))
        )
        split, width, _ = plan(last[0], last[1], workers.count, window_nodes)
    else:
        key, fr, total = frontier
        split, width = 0, max(1, min(FRONTIER_WINDOW, -(-total // (workers.count * WINDOWS_EACH))))
        expected += frontier_fingerprint(fr)
    workers.ready(searcher, fsm)
    stop, end_iteration = workers.begin()
    iteration = uuid.uuid4().hex
    done: queue.Queue = queue.Queue()
    pending: dict = {}
    taken = 0
    walks: dict = {}  # walk id -> (its nodes above the split depth, per depth counts)
    nodes = expanded = 0
    nxt = _kernel().INF
    windows, busy, longest = 0, 0.0, 0.0
    moves = None
    limited = False

    def hand_out():
        nonlocal taken
        while len(pending) < workers.count * (1 + AHEAD) and (total is None or taken < total):
            task = Window(
                iteration,
                recipe if workers.recipe else None,
                board.cells,
                thresh,
                weight,
                bpmx,
                split,
                fsm.depth,
                max_depth,
                taken,
                taken + width if key is None else min(total, taken + width),
                stop,
                key,
            )
            taken += width
            future = workers.submit(search_window, task)
            pending[future] = task
            future.add_done_callback(done.put)

    try:
        hand_out()
        while pending:
            raise_if_stopping()
            wait = None if deadline is None else max(deadline - time.perf_counter(), 0.0)
            try:
                future = done.get(timeout=0.5 if wait is None else min(wait, 0.5))
            except queue.Empty:
                if deadline is not None and time.perf_counter() >= deadline:
                    limited = True
                    break
                continue
            if pending.pop(future, None) is None or future.cancelled():
                continue
            end: WindowEnd = future.result()
            if end.fingerprint != expected:
                raise WorkersDiffer(
                    f"a worker searched {end.fingerprint} where the parent searches {expected} "
                    "(another database folder or other tables)"
                )
            nodes += end.nodes
            expanded += end.expanded
            windows, busy, longest = windows + 1, busy + end.seconds, max(longest, end.seconds)
            nxt = min(nxt, end.next)
            walks[end.walk] = (end.upper, end.counts)
            if end.status == _kernel().FOUND:
                moves = end.moves
                break
            if end.status == _kernel().ITERATION_DONE:
                if total is not None and total != end.seen:
                    raise WorkersDiffer(f"two walks of one iteration met {total} and {end.seen} nodes at depth {split}")
                total = end.seen
                for f, task in list(pending.items()):
                    if task.lo >= total and f.cancel():  # nothing there: never started
                        pending.pop(f)
            if node_limit is not None and nodes_before + _once(nodes, walks) >= node_limit:
                limited = True
                break
            if deadline is not None and time.perf_counter() >= deadline:
                limited = True
                break
            hand_out()
    finally:
        end_iteration()
        for f in pending:
            f.cancel()
    total_nodes = _once(nodes, walks)
    total_expanded = once(expanded, [u[1] for u, _ in walks.values()])
    counts = np.zeros(max_depth + 1, dtype=np.int64)
    if walks:
        counts = merged_counts(np.stack([c for _, c in walks.values()]), split)
    status = "found" if moves is not None else "limit" if limited else "done"
    wall = time.perf_counter() - t0
    workers.log.append(IterationWindows(thresh, windows, round(busy, 4), round(longest, 4), round(wall, 4)))
    return IterationEnd(status, total_nodes, total_expanded, nxt, counts, moves, workers.count)


def _once(nodes: int, walks: dict) -> int:
    """``nodes`` (every window's) with the walks' nodes above the split depth counted once."""
    return once(nodes, [u[0] for u, _ in walks.values()])


def _kernel():
    from . import kernel as K

    return K


def board_workers(processes: int | None = None, scheduler=None) -> Workers:
    """The workers of one board's search: ``processes`` of this machine, or the workers
    of the dask cluster at ``scheduler`` (an address or a ``distributed.Client``; a
    client opened here is closed with the workers).  OptionsError when the cluster
    cannot be reached (:func:`solver.distributed.connected`)."""
    if scheduler is None:
        return Workers.local(processes or 1)
    from contextlib import ExitStack

    from ..distributed import connected

    door = ExitStack()
    workers = Workers.cluster(door.enter_context(connected(scheduler)))
    workers._close = door.close
    return workers
