"""One IDA* iteration searched by several threads (``solve --threads N``).

A search starts on one thread; when an iteration outgrows
:data:`solver.search.driver.PARALLEL_AFTER` nodes, :func:`run_iteration` searches it again
from the root, and every later one, on ``threads`` threads.  Each thread runs the
compiled kernel without the GIL (:func:`solver.search.kernel.search_slice`) with arrays of
its own: no lock and no allocation per node.

The work is shared at a split depth (:func:`plan`, chosen from the nodes the last
iteration visited at each depth).  Every thread walks the tree above it alike, and
the nodes at the split depth are numbered in the order the serial search meets
them.  A thread searches the subtrees of the nodes numbered in its window and skips
the others; when it reaches the end of its window it takes the next one, the next
:func:`plan`-sized run of numbers nobody has taken.  So the threads move through
an iteration together in the serial search's order: the last iteration meets its
goal after about the nodes the serial search needs to reach it, shared between the
threads, and a thread never waits for work while there is any left.  Taking a
window costs one return to Python, every few hundred thousand nodes.

Every node within the threshold is still visited: each node at the split depth is
in exactly one window, and above it every thread walks the same nodes, because BPMX
raises no estimate there from below (a raise learnt in one thread's subtree would
prune what another thread still counts).  Every pruned node's f still bounds the
next threshold, so each iteration is as complete as the serial one, and the first
solution a thread finds within the threshold is optimal by the same argument: every
earlier threshold was completed.  The other threads stop at their next slice
boundary.  Node counts are summed over the threads, with the nodes above the split
depth counted once.

A node at the split depth whose subtree is large holds its thread while the others
take later windows; in the last iteration, when the goal lies under it, they search
past the goal for as long as it takes that thread to reach it.  So the nodes at a
second, deeper split depth are numbered within each node at the first, and a thread
that has spent ``share_after`` nodes in one node shares it (:meth:`Iteration._share`):
it keeps a window of the second numbering, and the threads that next need work take
the following windows of that node before any later window (:meth:`Iteration._take`),
walking to it again from the root.  Above the second depth BPMX raises no estimate
from below either, so every thread numbers a node's second-depth nodes alike.

The threads may change while an iteration runs (a :class:`~pdb_builder.cores.Share`
whose grant another process sets: ``slidepdb run`` gives a board the worker slots
nothing else can use, :mod:`solver.run.slots`).  The caller's thread looks at the
grant after each slice and starts a thread for each one granted and not running:
it walks from the root and takes the next window, as every thread does.  A thread
above a lowered grant takes no new window at the split depth and stops at the end of
the one it has, once no shared node has windows left (the threads that would take
them may all have ended): every number it took has been searched, and the smallest f
it pruned goes into the next threshold, so the iteration stays as complete as the
serial one.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from pdb_builder.cores import Share, share_of, usable_cores

from ..tuning import tuning
from .limits import raise_if_stopping
from .state import new_stack, new_state, path_moves, private_copy, slots, start_iteration

SPLIT_PARTS = 4_000  # the split depth holds at least this share (1/N) of the last iteration's nodes
# (the other numbers that cut an iteration up: solver.tuning)
GROWTH = 4  # how much larger an iteration is planned to be than the last


def default_threads() -> int:
    """Threads for one board: the cores this process may use."""
    return usable_cores()


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


class Worker:
    """One thread's arrays: the root's, a stack, a state vector and the goal table's scratch
    key (``fsm_root``: the pruning automaton's state at the root)."""

    def __init__(self, searcher, board, max_depth, K, fsm_root):
        self.searcher, self.board, self.K, self.fsm_root = searcher, board, K, fsm_root
        self.st = searcher.root_state(board)
        self.root = self.st.arrays()
        self.stack = new_stack(max_depth, searcher.ngroups)
        self.state = new_state()
        self.goal = searcher.goal._replace(key=private_copy(searcher.goal.key))  # the scratch key is written
        self.nodes = 0  # generated by this thread, the nodes above the split depth included
        self.expanded = 0
        self.upper = (0, 0)  # of which above the split depth in its present walk (generated, expanded)
        self.before = (0, 0)  # generated and expanded in its earlier walks (see restart)
        self.cnt_before = np.zeros_like(self.stack.cnt)  # their nodes per depth, at and below the split depth
        self.end = 0  # where its window of a frontier's open nodes ends (solver.search.frontier)

    def start(self, h0: int, thresh: int, split: int, split2: int) -> None:
        """A walk from the root."""
        start_iteration(self.st, self.board.blank, h0, thresh, self.stack, self.state, self.fsm_root, split)
        slots(self.state).split2 = split2

    def restart(self, h0: int, thresh: int, split: int, split2: int) -> None:
        """Back to the root, to walk to an earlier node: what the walk so far generated
        is kept (its walk above the split depth counted in full, as the extra work it is)."""
        v = slots(self.state)
        self.before = (self.before[0] + v.nodes, self.before[1] + v.expanded)
        self.cnt_before[split:] += self.stack.cnt[split:]
        self.st = self.searcher.root_state(self.board)  # the kernel left the arrays at the node it was in
        self.root = self.st.arrays()
        self.start(h0, thresh, split, split2)
        self.read()  # (the counts move at once, before the next slice's nodes are reserved)

    def read(self) -> None:
        """Its counts after a kernel call."""
        v = slots(self.state)
        self.nodes, self.expanded = self.before[0] + v.nodes, self.before[1] + v.expanded
        self.upper = (v.upper_nodes, v.upper_expanded)


class _Shared:
    """A node at the split depth that several threads share: its number, where its
    next window at the second split depth starts and how many numbers a window holds
    (``end``: its last number, once a thread has walked through it)."""

    def __init__(self, number: int, taken: int, window: int):
        self.number = number
        self.taken = taken
        self.window = window
        self.end: int | None = None

    def open(self) -> bool:
        return self.end is None or self.taken < self.end


class Pool:
    """One iteration searched by threads, each with its own :class:`Worker`, over windows
    of work a subclass hands out: the pool's loop (:meth:`_run`: slices of the kernel, a
    node limit reserved slice by slice so the threads never pass it, the deadline, the
    first solution, an error raised in the caller's thread), its threads (as many as the
    :class:`~pdb_builder.cores.Share` grants, joining while it runs) and its counts.  A
    subclass is a source of windows: :meth:`begin` (a thread's first window),
    :meth:`_take` (its next one), :meth:`slice` (the kernel on it) and :meth:`_share`
    (after a slice that spent its nodes).  :class:`Iteration` shares an iteration out
    at a split depth; :class:`solver.search.frontier.FrontierIteration`, the A* part's
    open nodes.  Shared state is guarded by ``cond`` where more than one thread writes."""

    def __init__(self, searcher, board, share: Share, thresh, weight, bpmx, deadline, node_limit, before, fsm, depth):
        from . import kernel as ida_kernel

        self.K = ida_kernel
        self.s, self.board, self.share = searcher, board, share
        self.thresh, self.weight, self.bpmx = thresh, weight, bpmx
        self.deadline, self.node_limit, self.nodes_before = deadline, node_limit, before
        self.max_depth = depth
        self.reserved = 0  # nodes granted to slices running now (under a node limit)
        self.tables = searcher.kernel_tables(fsm)
        self.fsm_root = searcher.fsm_root(board, fsm)
        self.cond = threading.Condition()
        self.stop = False  # a solution, a limit or an error: every thread stops at its next slice
        self.next = ida_kernel.INF
        self.moves = None
        self.limited = False
        self.error = None
        # every thread's worker, those that left included (their counts); the first the caller's
        self.workers: list[Worker] = [self.worker(0)]
        self.running: dict[int, threading.Thread | None] = {0: None}  # thread number -> its thread (0: the caller's)
        self.most = 1  # threads running at once, at most

    # -- what a source of windows gives ------------------------------------------------------

    def worker(self, me: int) -> Worker:
        """Thread number ``me``'s arrays."""
        return Worker(self.s, self.board, self.max_depth, self.K, self.fsm_root)

    def begin(self, w: Worker, me: int) -> bool:
        """``w`` at its first window (False: none)."""
        raise NotImplementedError

    def _take(self, w: Worker, finished: bool = False, me: int = 0) -> bool:
        """``w``'s next window, its last one ended (``finished``: its walk through);
        False when there is none."""
        raise NotImplementedError

    def slice(self, w: Worker, nodes: int) -> int:
        """The kernel on ``w``'s window for at most ``nodes`` nodes: its status."""
        raise NotImplementedError

    def _share(self, w: Worker) -> None:
        """After a slice that spent its nodes (the split search shares a long-held node)."""

    def slice_nodes(self) -> int:
        """Nodes a thread searches between looks at the clock and the other threads."""
        return tuning().par_slice

    def counts(self) -> np.ndarray | None:
        """Nodes visited at each depth, where the source keeps them (None: it does not)."""
        return None

    # -- the pool ---------------------------------------------------------------------------------

    def run(self) -> IterationEnd:
        """The iteration on the caller's thread and those the share grants: how it ended."""
        self.grow()
        try:
            self.work(self.workers[0])
        finally:
            self.join()
            self.share.report(1)
        if self.error is not None:
            raise self.error
        nodes, expanded = self.nodes(), _once(self.workers, "expanded", 1)
        status = "found" if self.moves is not None else "limit" if self.limited else "done"
        return IterationEnd(status, nodes, expanded, self.next, self.counts(), self.moves, self.most)

    def work(self, w: Worker, me: int = 0) -> None:
        """Thread number ``me``'s life: window by window, slice by slice, until its work
        is through, the threads stop or the grant drops below it."""
        try:
            if self.begin(w, me):
                self._run(w, me)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            with self.cond:
                self.error = self.error or exc
                self.stop = True
                self.cond.notify_all()
        finally:
            if me:
                with self.cond:
                    self.running[me] = None
                    self.share.report(self.count())

    def count(self) -> int:
        """Threads running now (under ``cond``)."""
        return sum(1 for me, t in self.running.items() if me == 0 or t is not None)

    def grow(self) -> None:
        """A thread for each number granted and not running (from the caller's thread)."""
        with self.cond:
            idle = [] if self.stop else [me for me in range(1, self.share.granted) if self.running.get(me) is None]
            for me in idle:
                w = self.worker(me)
                self.workers.append(w)
                t = self.running[me] = threading.Thread(target=self.work, args=(w, me), daemon=True)
                t.start()
            if idle:
                self.most = max(self.most, self.count())
                self.share.report(self.count())

    def join(self) -> None:
        """Wait for every thread started (the caller's walk is through)."""
        while True:
            with self.cond:
                alive = [t for t in self.running.values() if t is not None]
            if not alive:
                return
            for t in alive:
                t.join()

    def _run(self, w: Worker, me: int) -> None:
        K = self.K
        while not self.stop:
            if me == 0 and not self.share.fixed:
                self.grow()
            slice_nodes = self.slice_nodes()
            if self.node_limit is not None:
                with self.cond:  # a node limit: each slice's nodes reserved, so the threads never overrun it
                    left = self._left()
                    slice_nodes = min(slice_nodes, max(left // self.count(), 1))
                    if left <= 0:
                        self._limit()
                        return
                    self.reserved += slice_nodes
            status = self.slice(w, slice_nodes)
            raise_if_stopping()  # (work() hands it to the caller's thread and stops the others)
            with self.cond:  # (the state vector counts from the start of the thread's walk)
                w.read()
                if self.node_limit is not None:
                    self.reserved -= slice_nodes
            if me == 0 and self.s.progress is not None:  # the caller's thread
                self.s.progress.search(self.thresh, self.nodes_before + self.nodes())
            if status == K.FOUND:
                self._found(path_moves(self.s.letters, w.stack, slots(w.state).depth))
                return
            if status == K.ITERATION_DONE:
                with self.cond:
                    self.next = min(self.next, slots(w.state).next)
                if not self._take(w, finished=True, me=me):  # more: a shared node's windows, the frontier's nodes
                    return
            elif status == K.WINDOW or status == K.WINDOW2:
                if not self._take(w, me=me):  # above a lowered grant
                    return
            elif status == K.SLICE_SPENT:
                self._share(w)
            if self.deadline is not None and time.perf_counter() >= self.deadline:
                self._limit()
                return

    def _found(self, moves: str) -> None:
        with self.cond:
            if self.moves is None:
                self.moves = moves
            self.stop = True
            self.cond.notify_all()

    def _limit(self) -> None:
        with self.cond:  # (a Condition's lock is reentrant)
            self.limited = True
            self.stop = True
            self.cond.notify_all()

    def _left(self) -> int:
        """Nodes the limit leaves, less those reserved for slices running now (under ``cond``)."""
        return self.node_limit - self.nodes_before - self.nodes() - self.reserved

    def nodes(self) -> int:
        """Generated so far, the nodes above the split depth counted once."""
        return _once(list(self.workers), "nodes", 0)


class Iteration(Pool):
    """The split search's iteration: the nodes at the split depth shared out in windows
    of their numbers in the serial order, a long-held node's second-depth nodes too."""

    def __init__(self, searcher, board, share: Share, spec: IterationSpec):
        thresh, weight, bpmx, deadline, node_limit, before, last, max_depth, fsm = spec
        self.threads = share.granted  # at the start: the plan's
        self.split, self.window, self.split2 = plan(last[0], last[1], self.threads)
        self.taken = 0  # windows start here: numbers below it are some thread's
        self.shared: list[_Shared] = []  # nodes at the split depth shared out, in the serial order
        super().__init__(searcher, board, share, thresh, weight, bpmx, deadline, node_limit, before, fsm, max_depth)

    def begin(self, w: Worker, me: int) -> bool:
        w.start(self._h0(w), self.thresh, self.split, self.split2)
        return self._take(w, me=me)

    def slice(self, w: Worker, nodes: int) -> int:
        return self.K.search_slice(w.root, self.tables, w.stack, w.state, nodes, self.bpmx, w.goal, self.weight)

    def _h0(self, w: Worker) -> int:
        return w.st.h0 if self.weight == 100 else (w.st.h0 * self.weight) // 100

    def _take(self, w: Worker, finished: bool = False, me: int = 0) -> bool:
        """``w``'s next work, when its window ends or its walk is through
        (``finished``); False when there is none.  In a shared node, the node's next
        window; with no numbers of its own left, the earliest in the serial order: the
        next window of a shared node (walked to again from the root), else the next
        window of numbers at the split depth, unless thread number ``me`` is above the
        grant (False: it stops, every number it took searched).  A thread never stops
        while a shared node has windows left: the threads that would take them may
        all have ended."""
        K, v = self.K, slots(w.state)
        leaving = me >= self.share.granted
        with self.cond:
            seen, depth, mine = v.seen, v.depth, v.shared
            inside = mine == seen and depth >= self.split  # in the node it shares
            for sh in self.shared:
                if sh.number == mine == seen and not inside and sh.end is None:  # walked through it
                    sh.end = v.seen2
            self.shared = [sh for sh in self.shared if sh.open()]
            if inside:
                sh = next((sh for sh in self.shared if sh.number == seen), None)
                if sh is not None:
                    self._give(w, sh)
                    return True
                v.lo2 = v.hi2 = K.INF  # nothing more of it: walk through
                if seen < v.hi:
                    return True  # its own window goes on after it
            if self.shared:
                sh = self.shared[0]
                self.next = min(self.next, v.next)
                if self.node_limit is not None and self._left() < self._restart_cost(w):
                    self._limit()  # its walk above the split depth, counted once so far, would overrun the limit
                    return False
                w.restart(self._h0(w), self.thresh, self.split, self.split2)
                v.lo, v.hi, v.shared = sh.number - 1, sh.number, sh.number
                self._give(w, sh)
                return True
            if finished:
                return False
            if leaving:  # every number it took is searched: what it pruned bounds the next threshold
                self.next = min(self.next, v.next)
                return False
            v.lo = self.taken
            self.taken += self.window
            v.hi = self.taken
            return True

    def _restart_cost(self, w: Worker) -> int:
        """What :meth:`Worker.restart` adds to :meth:`nodes` at once: ``w``'s walk
        above the split depth so far, counted once until then, becomes its own."""
        return min(w.upper[0], max((x.upper[0] for x in self.workers if x is not w), default=0))

    def _give(self, w: Worker, sh: _Shared) -> None:
        """The next window of the shared node ``sh`` to ``w``."""
        slots(w.state).lo2 = sh.taken
        sh.taken += sh.window
        slots(w.state).hi2 = sh.taken

    def _share(self, w: Worker) -> None:
        """Share the node at the split depth that ``w`` is in, when it has held ``w``
        long.  Its windows hold about ``window_nodes`` nodes at the rate ``w`` met
        its numbers so far; ``w`` keeps the first."""
        v = slots(w.state)
        spent = int(v.nodes - v.entry)
        if not self.split2 or v.depth < self.split or v.shared == v.seen or spent < tuning().share_after:
            return
        seen2 = v.seen2
        window = max(int(tuning().window_nodes * max(seen2, 1) / spent), 1)
        first = seen2 - 1 if v.depth >= self.split2 else seen2  # (in a node numbered seen2)
        with self.cond:
            v.shared = v.seen
            v.lo2 = first
            v.hi2 = first + window
            self.shared.append(_Shared(v.seen, first + window, window))
            self.shared.sort(key=lambda sh: sh.number)

    def counts(self) -> np.ndarray:
        """Nodes visited at each depth: above the split depth every thread's walk is
        the same (the longest counts), at it and below the threads' parts add up."""
        workers = list(self.workers)  # (their earlier walks counted at and below the split depth only)
        return merged_counts(np.stack([w.stack.cnt for w in workers]), self.split) + sum(w.cnt_before for w in workers)


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


def _once(workers, field: str, i: int) -> int:
    """Sum of the workers' ``field`` with the nodes above the split depth (``upper[i]``) counted once."""
    return once(sum(getattr(w, field) for w in workers), [w.upper[i] for w in workers])


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


def run_iteration(searcher, board, threads, spec: IterationSpec):
    """One iteration of ``board``'s search (``spec``) from its root on ``threads``
    threads (a count, or a :class:`~pdb_builder.cores.Share` followed while it runs)."""
    return Iteration(searcher, board, share_of(threads), spec).run()
