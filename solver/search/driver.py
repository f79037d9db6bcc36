"""The IDA* driver: one search of a board, threshold by threshold (:class:`Drive`).

An iteration is searched in slices of the kernel on this thread from the root; once large,
it goes to a backend (:class:`~solver.search.state.Backend`: this process's threads,
:class:`solver.search.threads.Threads`, or worker processes,
:class:`solver.search.processes.Workers`) with a work source: the root's split depth
(:data:`solver.search.threads.ROOT`) or the A* part's open nodes
(:class:`solver.search.frontier.FrontierRun`, from the root with the search's ``frontier``, or
once the search has grown where it was measured to pay: :func:`frontier_pays`).  Every
pair goes through one call, ``backend.iteration(searcher, board, spec, source)``.  The
driver alone keeps the thresholds (of the estimate's parity, from a proven floor, below a
known answer's length), the node and time limits, the iterations completed and the
result: optimal only where an iteration at the answer's length completed every one below
it on an admissible estimate.
"""

from __future__ import annotations

import time

from ..tuning import tuning
from .limits import raise_if_stopping
from .sources import IterationSpec
from .state import SearchResult, new_stack, new_state, path_moves, slots, start_iteration
from .threads import ROOT

FIRST_SLICE = 20_000  # nodes of a search's first slice under a time limit, before its speed is known
PARALLEL_AFTER = 200_000  # with threads: nodes of an iteration searched serially before it splits
# what an iteration on n threads is counted to go, n times this times one thread's speed, when
# a search whose threads may grow weighs starting its iteration again on them (restart_pays)
SPLIT_EFFICIENCY = 0.8
ITERATION_GROWTH = 4.0  # an iteration's size against the last one's, where the search shows none


def frontier_pays(shape) -> bool:
    """Whether a long search of ``shape`` goes on by A*+IDA* by default: the 5x5 without
    walls, the 24-puzzle, where it was measured."""
    return shape.width == 5 and shape.height == 5 and not shape.walls


def restart_pays(threads: int, spent: float, left: float | None, done: list) -> bool:
    """Whether an iteration searched for ``spent`` seconds on one thread, with ``left``
    seconds of its limit left (None: no limit), ends sooner (or gets further by the
    limit) searched again from its root on ``threads`` threads: the threads cover
    again what was searched, then go on faster.  ``done``: the search's completed
    iterations, (threshold, nodes, seconds) each, from which this one's length is
    guessed (the last one's seconds times its growth)."""
    gain = threads * SPLIT_EFFICIENCY
    if gain <= 1:
        return False
    if left is not None and left * (gain - 1) <= spent:  # by the limit: (left - spent/gain) * gain > left
        return False
    if done:
        growth = done[-1][1] / max(done[-2][1], 1) if len(done) > 1 else ITERATION_GROWTH
        expected = max(done[-1][2] * growth, spent)
        return spent + expected / gain < expected
    return True


def slice_within(nodes: int, elapsed: float, left: float) -> int:
    """Nodes for the next slice of a search with ``left`` seconds to its time limit,
    having visited ``nodes`` in ``elapsed`` seconds: what it visits in the time left at
    that speed (a tenth more, at least :data:`FIRST_SLICE`), so that a limit of a
    fraction of a second is looked at within a slice of it, not after a whole
    ``slice_nodes`` (:mod:`solver.tuning`; a fifth of a second and more)."""
    if nodes <= 0 or elapsed <= 0:
        return FIRST_SLICE
    return max(FIRST_SLICE, int(1.1 * nodes / elapsed * max(left, 0.0)))


class Drive:
    """One search of ``board`` on ``searcher`` (:meth:`run`): what
    :meth:`solver.search.searcher.Searcher.solve` asks for, after its first nodes."""

    def __init__(
        self, searcher, board, time_limit, node_limit, max_depth: int, weight: int, threads, known, frontier=None
    ):
        from . import kernel as K

        self.K, self.s, self.board = K, searcher, board
        self.frontier = frontier  # A*+IDA*'s open nodes from the root (0: IDA* alone; None: the default policy)
        self.node_limit, self.max_depth, self.weight = node_limit, max_depth, weight
        self.backend = searcher.where(threads)  # this process's threads, or worker processes
        self.t0 = time.perf_counter()
        self.deadline = None if time_limit is None else self.t0 + time_limit
        self.floor, self.ceiling = known
        self.st = searcher.root_state(board)
        self.h0 = self.st.h0 if weight == 100 else (self.st.h0 * weight) // 100
        self.names = searcher.names
        self.done: list = []  # the iterations completed: (threshold, nodes, seconds)
        self.most = 1  # threads that searched at once, at most
        self.part = None  # A*+IDA*: (open nodes kept, the A* part's nodes, its bounds counted as iterations)
        self.nodes = self.expanded = 0
        self.began = (0, self.t0)  # where the iteration under way began: nodes, perf_counter
        self.front = None  # A*+IDA*: the A* part built, IDA* below its open nodes (solver.search.frontier)
        self.fsm = searcher.automaton  # this iteration's pruning: every thread of it follows the same one
        self.bpmx = searcher.bpmx and weight == 100
        self.parallel = False  # once an iteration outgrew a slice, every later one runs on the backend
        self.last = None  # the last iteration's (nodes visited per depth, nodes): where the next one splits

    def result(self, moves, thresh) -> SearchResult:
        """The search's result: ``moves`` found at threshold ``thresh`` (None: a limit, or
        the ceiling, with ``thresh`` proven as its lower bound)."""
        weight, st, nodes, began = self.weight, self.st, self.nodes, self.began
        found = moves is not None
        optimal = found and (weight == 100 or not moves)
        bound = len(moves) if optimal else (thresh if weight == 100 else st.h0)
        length = len(moves) if found else None
        status = "solved" if found else "limit"
        seconds = time.perf_counter() - self.t0
        out = SearchResult(moves, length, optimal, bound, nodes, seconds, status, self.names, st.h0, self.expanded)
        out.iterations = self.done
        if not found and weight == 100 and nodes > began[0]:
            out.unfinished = (thresh, nodes - began[0], round(time.perf_counter() - began[1], 4))
        out.threads, out.frontier = self.most, self.part
        return out

    def run(self) -> SearchResult:
        """The threshold loop."""
        s = self.s
        if self.h0 == 0:
            return self.result("", 0)
        self.stack = new_stack(self.max_depth, s.ngroups)
        self.state = new_state()
        self.tables = s.kernel_tables(self.fsm)
        # thresholds keep the parity of the estimate (every f of a board has it)
        thresh = max(self.h0, self.floor - (self.floor - self.h0) % 2)
        if self.frontier and self.weight == 100:  # A*+IDA* from the root
            ended = self.by_frontier(self.frontier, self.floor, from_root=True)
            if ended is not None:
                return ended
            thresh = self.front.start(self.floor)
        while True:
            if self.ceiling is not None and thresh >= self.ceiling:  # every iteration below the known answer ended
                return self.result(None, thresh)
            if self.front is not None:
                ended, nxt = self.frontier_iteration(thresh)
            else:
                ended, nxt = self.root_iteration(thresh)
            if ended is not None:
                return ended
            self.done.append((thresh, self.last[1], round(time.perf_counter() - self.began[1], 4)))
            self.began = (self.nodes, time.perf_counter())
            left = None if self.deadline is None else self.deadline - self.began[1]
            if self.fsm is not (fsm := s.pruning_after(self.fsm, self.nodes, left)):
                self.fsm, self.tables = fsm, s.kernel_tables(fsm)
            if nxt >= self.max_depth:
                # Thresholds stay below max_depth, so the stack never overflows and no
                # depth cut can hide a solution; past it the board stays unsolved.
                return self.result(None, thresh)
            if self.front is None and self.frontier_next(self.last[1], nxt):  # the rest by A*+IDA*
                ended = self.by_frontier(tuning().frontier_nodes, nxt, from_root=False)
                if ended is not None:
                    return ended
                nxt = self.front.start(nxt)
            thresh = nxt

    def root_iteration(self, thresh: int):
        """The iteration at ``thresh`` from the root: in slices on this thread, and once it
        outgrows them (or a grant of threads makes it pay) again from the root on the
        threads or the workers; (the result where it ended the search, the next threshold)."""
        K, s, st, stack, state = self.K, self.s, self.st, self.stack, self.state
        v = slots(state)  # (the one view of it: solver.search.state.Slots)
        deadline, node_limit = self.deadline, self.node_limit
        start_iteration(st, self.board.blank, self.h0, thresh, stack, state, s.fsm_root(self.board, self.fsm))
        v.nodes, v.expanded = self.nodes, self.expanded
        started = self.nodes
        self.began = (self.nodes, time.perf_counter())
        root = st.arrays()
        while not self.parallel:
            most = tuning().slice_nodes
            slice_nodes = most if self.backend.alone or self.backend.grows else min(most, PARALLEL_AFTER)
            if deadline is not None:  # a short limit is looked at often enough to hold
                now = time.perf_counter()
                slice_nodes = min(slice_nodes, slice_within(self.nodes, now - self.t0, deadline - now))
            if node_limit is not None:
                slice_nodes = min(slice_nodes, node_limit - v.nodes)
            status = (
                K.SLICE_SPENT
                if slice_nodes <= 0
                else K.search_slice(root, self.tables, stack, state, slice_nodes, self.bpmx, s.goal, self.weight)
            )
            raise_if_stopping()
            self.nodes, self.expanded = v.nodes, v.expanded
            if s.progress is not None:
                s.progress.search(thresh, self.nodes)
            if status == K.FOUND:
                return self.result(path_moves(s.letters, stack, v.depth), thresh), None
            if status == K.ITERATION_DONE:
                break
            if (node_limit is not None and self.nodes >= node_limit) or (
                deadline is not None and time.perf_counter() >= deadline
            ):
                return self.result(None, thresh), None
            if not self.backend.grows:  # (threads that may join while it runs: solver.search.state.Backend)
                self.parallel = not self.backend.alone
            elif self.backend.count > 1:  # more threads granted mid-iteration: this one again on them?
                left = None if deadline is None else deadline - time.perf_counter()
                spent = time.perf_counter() - self.began[1]
                self.parallel = restart_pays(self.backend.count, spent, left, self.done)
        if not self.parallel or self.last is None:
            self.last = (stack.cnt.copy(), self.nodes - started)
        if not self.parallel:
            # the next iterations on the split search once they are large, even on one thread:
            # the threads granted while one runs join it
            self.parallel = self.backend.grows and self.nodes - started > PARALLEL_AFTER
            return None, v.next
        return self.on_backend(thresh, ROOT)  # again from the root, on the backend

    def on_backend(self, thresh: int, source):
        """The iteration at ``thresh`` from ``source`` (the root's split depth, the A* part's
        open nodes) on the backend; (the result where it ended the search, the next threshold)."""
        spec = IterationSpec(
            thresh, self.weight, self.bpmx, self.deadline, self.node_limit, self.nodes, self.last, self.max_depth,
            self.fsm,
        )  # fmt: skip
        out = self.backend.iteration(self.s, self.board, spec, source)
        self.nodes += out.nodes
        self.expanded += out.expanded
        self.most = max(self.most, out.threads)
        if out.status != "done":
            self.began = (self.nodes - out.nodes, self.began[1])  # (an iteration from its root)
            return self.result(out.moves, thresh), None
        self.last = (out.counts, out.nodes)
        return None, out.next_threshold

    def frontier_iteration(self, thresh: int):
        """The iteration at ``thresh`` below the A* part's open nodes."""
        self.began = (self.nodes, time.perf_counter())
        return self.on_backend(thresh, self.front)

    def frontier_next(self, iteration: int, nxt: int) -> bool:
        """Whether the iterations after one of ``iteration`` nodes go on by A*+IDA* (the
        default policy, ``frontier_after`` of :class:`~solver.tuning.Tuning`)."""
        return (
            self.frontier is None
            and self.weight == 100
            and iteration >= tuning().frontier_after
            and (self.ceiling is None or nxt < self.ceiling)
            and frontier_pays(self.s.shape)
        )

    def by_frontier(self, size: int, floor: int, from_root: bool):
        """The search on by A*+IDA* from ``floor``: the A* part built, its nodes counted
        (its bounds as iterations where it starts at the root); the result where the A*
        part found the answer or a limit stopped it, else None (:attr:`front` set)."""
        from .frontier import FrontierRun

        left = None if self.node_limit is None else self.node_limit - self.nodes
        count = self.backend.count
        run = FrontierRun(self.s, self.board, size, self.max_depth, self.deadline, left, self.ceiling)
        fr = run.fr
        self.nodes, self.expanded, self.most = self.nodes + fr.nodes, self.expanded + fr.expanded, max(self.most, count)
        self.part = (run.kept(), fr.nodes, len(fr.done) if from_root else 0)
        if from_root:
            self.done.extend(fr.done)
        self.began = (self.nodes, time.perf_counter())
        if fr.moves is not None:
            return self.result(fr.moves, len(fr.moves))
        if fr.stopped:
            return self.result(None, run.stopped_bound(floor, self.st.h0))
        self.front = run
        return None
