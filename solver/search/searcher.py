"""IDA* (Korf 1985) with an explicit stack, incremental heuristics and node counts.

``ida_star(board, heuristic)`` returns a :class:`SearchResult`.  The kernel works
in slices of at most ``slice_nodes`` generated nodes (:mod:`solver.tuning`) and keeps its whole state in
arrays, so the Python driver checks the time limit between slices and a search
can stop at any moment without losing what it knows: the last completed
threshold is a proven lower bound.

``optimal`` is claimed only when the threshold iteration that found the answer
began at the threshold every earlier completed iteration proved, with an
admissible heuristic: the first solution at threshold f is optimal.

The kernel (:mod:`solver.search.kernel`) is imported at a search's first need; a
board that :mod:`solver.search.first_nodes` answers in plain Python never loads numba.
"""

from __future__ import annotations

import time
from functools import cached_property

import numpy as np

from pdb_builder.board import Board
from pdb_builder.cores import Share, share_of
from pdb_builder.entries import bits_at, root_value
from pdb_builder.solvability import decide

from ..tuning import tuning
from .automaton import Automaton, automaton_for, deeper, neighbour_arrays, undo_only
from .first_nodes import first_nodes_search, kernel_loaded
from .heuristic import (
    MAX_LOOKUP_TILES,
    Heuristic,
    TableReads,
    ZeroArrays,
    board_arrays,
    goal_arrays,
    kernel_arrays,
    manhattan_heuristic,
)
from .limits import raise_if_stopping
from .state import Backend, Root, SearchResult, new_stack, new_state, path_moves, private, slots, start_iteration

MAX_DEPTH = 1000  # deepest path the kernel keeps; longer thresholds stop as a limit
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


def _kernel():
    """solver.search.kernel, imported (and numba with it) at the first search that needs it."""
    from . import kernel as ida_kernel

    return ida_kernel


def slice_within(nodes: int, elapsed: float, left: float) -> int:
    """Nodes for the next slice of a search with ``left`` seconds to its time limit,
    having visited ``nodes`` in ``elapsed`` seconds: what it visits in the time left at
    that speed (a tenth more, at least :data:`FIRST_SLICE`), so that a limit of a
    fraction of a second is looked at within a slice of it, not after a whole
    ``slice_nodes`` (:mod:`solver.tuning`; a fifth of a second and more)."""
    if nodes <= 0 or elapsed <= 0:
        return FIRST_SLICE
    return max(FIRST_SLICE, int(1.1 * nodes / elapsed * max(left, 0.0)))


class Searcher:
    """Prepared arrays for one shape and heuristic; solves many boards of that shape."""

    def __init__(self, heuristic: Heuristic, bpmx: bool = True, packed: bool = True, prune: int | None = None):
        self.h = heuristic
        self.bpmx = bpmx
        # until the compiled kernel is loaded, a search first runs a few nodes in plain
        # Python (solver.search.first_nodes): a near-goal board is answered without loading numba
        self.python_first = True
        # an object with search(threshold, nodes), told after each slice of work
        # (the CLI's live line of one board, solver.cli.progress.SearchLine), or None
        self.progress = None
        self.shape = heuristic.shape
        self.nbr, self.ndeg, self.letters, self.ndir = neighbour_arrays(self.shape)
        # duplicate paths pruned by the shape's automaton (solver.search.automaton): of depth
        # ``prune``, or (None) deeper as this searcher's searches grow long (``searched``: the
        # nodes they generated)
        self.prune = prune
        # how a dask worker opens the same tables (solver.search.processes.Recipe), where
        # they come from files; None: a cluster cannot share this searcher's iterations
        self.recipe = None
        self.automaton = undo_only(self.shape) if prune is None else automaton_for(self.shape, prune)
        self.searched = 0
        # A*+IDA* (solver.search.frontier): the open nodes the A* part keeps, at most; 0: IDA*
        # alone; None: IDA* alone until a long search of a shape where it pays (frontier_pays)
        self.frontier: int | None = None
        (
            self.tables,
            self.lk_k,
            self.lk_slots,
            self.lk_fixed,
            self.lk_cellmap,
            self.lk_w,
            self.lk_group,
            self.tile_lk,
            self.tile_slot,
        ) = kernel_arrays(heuristic)
        # lookup i's two-bit table where its file has one (unless packed=False), else the full one
        # (a table with zero-aware entries is read whole: they are worth more than the two-bit copy's memory)
        self.packed = tuple(
            np.ascontiguousarray(lk.packed, dtype=np.uint8)
            if packed and lk.packed is not None and lk.zero is None
            else None
            for lk in heuristic.lookups
        )
        self.lk_pk = np.array([p is not None for p in self.packed] or [False], dtype=np.bool_)
        # the kernel reads lookup i's table at lk_base[i] + rank (its byte, for a packed one);
        # self.tables and self.packed keep the arrays alive
        self.lk_full = np.array([t.ctypes.data for t in self.tables] or [0], dtype=np.int64)  # one-byte tables
        self.lk_base = self.lk_full.copy()
        for i, p in enumerate(self.packed):
            if p is not None:
                self.lk_base[i] = p.ctypes.data
        self.zero = ZeroArrays(heuristic.lookups)
        g = self.shape.goal_blank
        self.bpar = np.array([max(self.shape.distances[g][c], 0) & 1 for c in range(self.shape.n)], dtype=np.int64)
        self.nlookups = len(heuristic.lookups)
        self.ngroups = heuristic.ngroups
        self.reads = TableReads(heuristic, [p is not None for p in self.packed])

    @cached_property
    def goal(self) -> tuple:
        """The goal table as the kernel's arguments (built at the kernel's first use)."""
        return goal_arrays(self.h)

    def initial_h(self, board: Board) -> int:
        st = self.root_state(board)
        return st.h0

    def kernel_tables(self, fsm: Automaton | None = None) -> tuple:
        """The kernel's read-only arrays: the shape's neighbours and estimates, every
        lookup's table base, cell map, ranking weights and tile slots, the parity
        of each blank cell's distance from its goal cell, and the pruning automaton
        (``fsm``, or the searcher's) with each neighbour's move."""
        h = self.h
        fsm = fsm or self.automaton
        return (
            self.nbr,
            self.ndeg,
            h.md,
            h.rowkey,
            h.colkey,
            self.shape.width,
            self.shape.height,
            h.use_lc,
            self.lk_base,
            self.lk_pk,
            self.lk_cellmap,
            self.lk_w,
            self.tile_lk,
            self.tile_slot,
            self.ngroups,
            self.bpar,
            fsm.delta,
            self.ndir,
            self.zero.kernel,
        )

    def fsm_root(self, board: Board, fsm: Automaton | None = None) -> int:
        """The state at ``board``'s root of the pruning automaton ``fsm`` (or the searcher's)."""
        return int((fsm or self.automaton).roots[board.blank])

    def pruning_after(self, fsm: Automaton, nodes: int, left: float | None) -> Automaton:
        """The automaton for a search's next iteration, ``nodes`` into it with ``fsm``
        and ``left`` seconds to its time limit (None: none): a deeper one once the
        searcher's searches have run long enough to pay for it and the limit leaves room
        (:func:`~solver.search.automaton.deeper`), kept for its later searches."""
        if self.prune is not None:
            return fsm
        better = deeper(self.shape, self.automaton, self.searched + nodes, left)
        if better is not None:
            self.automaton = better
        return self.automaton  # never shallower than fsm: the searcher's only ever deepens

    def root_state(self, board: Board) -> Root:
        """The root's arrays and estimate, as the kernel keeps them up to date."""
        K = _kernel()
        shape = self.shape
        cells, pos = board_arrays(shape, board.cells)
        buf = private(2 * max(shape.width, shape.height) + 2)
        lc_lines = private(shape.width + shape.height)
        place = private(MAX_LOOKUP_TILES)
        lk_val = private(max(self.nlookups, 1))
        group_sum = private(max(self.ngroups, 1))
        md = int(sum(self.h.md[t, c] for c, t in enumerate(board.cells) if t > 0))
        lc = (
            int(K.lc_total(cells, self.h.rowkey, self.h.colkey, shape.width, shape.height, lc_lines, buf))
            if self.h.use_lc
            else 0
        )
        nl = max(self.nlookups, 1)
        lk_rank = private(nl)
        lk_used = private(nl, np.uint64)
        lk_slotof = private((nl, 64))  # a table has at most 64 cells (one 64-bit mask)
        K.init_root(
            self.lk_full,
            pos,
            self.lk_k,
            self.lk_slots,
            self.lk_fixed,
            self.lk_cellmap,
            self.lk_w,
            self.lk_group,
            self.nlookups,
            lk_rank,
            lk_used,
            lk_slotof,
            lk_val,
            group_sum,
            place,
        )
        self.reads.at_root(lk_rank)  # the root's one-byte entries just read: checked before the search
        if self.nlookups:
            for i, p in enumerate(self.packed):
                if p is not None:  # the search tracks the relaxed values the two bits encode
                    r = int(lk_rank[i])
                    new = int(root_value(int(lk_val[i]), int(bits_at(int(p[r >> 2]), r))))
                    group_sum[self.lk_group[i]] += new - lk_val[i]
                    lk_val[i] = new
        self.zero.at_root(self.h.lookups, board.blank, lk_rank, lk_used, lk_val, group_sum)
        h0 = max([md + lc] + [int(v) for v in group_sum[: self.ngroups]])
        keys, dist, depth, bits, per, codes, gcells, key = self.goal
        if depth >= 0:
            e = int(K.goal_distance(cells, keys, dist, bits, per, codes, gcells, key))
            h0 = max(h0, depth + 1) if e < 0 else e
        h0 = int(K.parity_up.py_func(h0, int(self.bpar[board.blank])))  # plain Python: no kernel to load
        return Root(
            cells=cells,
            pos=pos,
            buf=buf,
            lc_lines=lc_lines,
            lk_rank=lk_rank,
            lk_used=lk_used,
            lk_slotof=lk_slotof,
            lk_val=lk_val,
            group_sum=group_sum,
            md=md,
            lc=lc,
            h0=h0,
        )

    def solve(
        self,
        board: Board,
        time_limit: float | None = None,
        node_limit: int | None = None,
        max_depth: int = MAX_DEPTH,
        weight: int = 100,
        threads: int | Share = 1,
        floor: int = 0,
        ceiling: int | None = None,
    ) -> SearchResult:
        """IDA* for ``board``.  ``weight`` (percent, >= 100) inflates the estimate for
        a faster, bounded-suboptimal search (weighted IDA*: at most weight/100 times
        the optimal length); only ``weight == 100`` can claim optimality.  Returns only
        once the tables it read have passed their checksums (:class:`TableReads`).

        Until the kernel is loaded in this process, the first :data:`solver.search.first_nodes.FIRST_NODES`
        nodes are searched in plain Python (:mod:`solver.search.first_nodes`); their nodes and time
        count against the limits.

        ``threads > 1``: an iteration that outgrows one slice of nodes (and every
        later one) is searched by that many threads (:mod:`solver.search.threads`); the
        answer's length is the same, proven the same way.  A
        :class:`~solver.search.processes.Workers`: by worker processes, this machine's
        or a dask cluster's (:mod:`solver.search.processes`; a cluster needs the
        searcher's :attr:`recipe`, else this process's threads search).  A
        :class:`~pdb_builder.cores.Share` whose grant may change: such an iteration is
        searched by as many threads as the grant says while it runs, even one.

        ``floor``: a lower bound an earlier search of ``board`` proved (the threshold of
        an iteration it reached, on any admissible estimate): the first iteration starts
        there, not at the estimate, since every one below it is known to end without a
        solution.  ``ceiling``: the length of an answer known already: the search ends
        as soon as its next iteration would reach that length, the result a limit whose
        lower bound is then that length (the known answer is optimal; the caller merges
        the two, :func:`solver.outcome.better`).  Both apply to optimal searches only."""
        if weight < 100:
            raise ValueError("weight must be at least 100 (percent)")
        t0 = time.perf_counter()
        spent = spent_expanded = 0
        if weight != 100:
            floor, ceiling = 0, None
        if weight == 100 and self.python_first and not kernel_loaded() and not floor and ceiling is None:
            quick = first_nodes_search(self, board, node_limit)
            if not isinstance(quick, tuple):
                return quick
            spent, spent_expanded = quick[1], quick[2]
        self.reads.begin()  # the arrays the kernel reads anywhere, hashed while it loads and runs
        left = None if time_limit is None else max(time_limit - (time.perf_counter() - t0), 0.0)
        result = self._solve(
            board,
            left,
            None if node_limit is None else node_limit - spent,
            max_depth,
            weight,
            threads,
            (floor, ceiling),
        )
        result.nodes += spent
        result.expanded += spent_expanded
        result.seconds = time.perf_counter() - t0
        self.searched += result.nodes
        self.reads.wait()
        return result

    def where(self, threads) -> tuple:
        """Where a search of this searcher runs: (worker processes or None, the threads
        of this process).  ``threads``: a thread count, a :class:`~pdb_builder.cores.Share`
        or None (every core), or :class:`~solver.search.processes.Workers` (which imports
        this module); a cluster's workers that could not open this searcher's tables (it
        has no recipe) give way to this process's threads."""
        if not isinstance(threads, Backend):
            return None, share_of(threads)
        if threads.recipe and self.recipe is None:
            return None, share_of(None)
        return threads, share_of(1)

    @property
    def names(self) -> list[str]:
        """The estimate's parts, as a result names them."""
        names = list(self.h.names) or ["manhattan+lc" if self.h.use_lc else "manhattan"]
        return names + ([self.h.goal_name] if self.h.goal_name else [])

    def _solve(
        self, board: Board, time_limit, node_limit, max_depth: int, weight: int, threads, known=(0, None)
    ) -> SearchResult:
        """The one threshold loop of IDA*: each iteration from the root (on this thread,
        then on the split search's threads or workers once large), or below the open
        nodes of an A* part (:class:`~solver.search.frontier.FrontierRun`) from the root
        (``frontier``) or once the search has grown (:meth:`_frontier_next`)."""
        K = _kernel()
        workers, threads = self.where(threads)
        t0 = time.perf_counter()
        st = self.root_state(board)
        h0 = st.h0
        if weight != 100:
            h0 = (h0 * weight) // 100
        names = self.names

        done = []  # the iterations completed: (threshold, nodes, seconds)
        most = 1  # threads that searched at once, at most
        part = None  # A*+IDA*: (open nodes kept, the A* part's nodes, its bounds counted as iterations)

        def result(moves, thresh, nodes, expanded=0):
            found = moves is not None
            optimal = found and (weight == 100 or not moves)
            bound = len(moves) if optimal else (thresh if weight == 100 else st.h0)
            length = len(moves) if found else None
            status = "solved" if found else "limit"
            seconds = time.perf_counter() - t0
            out = SearchResult(moves, length, optimal, bound, nodes, seconds, status, names, st.h0, expanded, done)
            if not found and weight == 100 and nodes > began[0]:
                out.unfinished = (thresh, nodes - began[0], round(time.perf_counter() - began[1], 4))
            out.threads, out.frontier = most, part
            return out

        if h0 == 0:
            began = (0, t0)
            return result("", 0, 0)
        stack = new_stack(max_depth, self.ngroups)
        state = new_state()
        v = slots(state)  # (the one view of it: solver.search.state.Slots)
        root = st.arrays()
        fsm = self.automaton  # this iteration's pruning: every thread of it follows the same one
        tables = self.kernel_tables(fsm)
        bpmx = self.bpmx and weight == 100
        deadline = None if time_limit is None else t0 + time_limit
        floor, ceiling = known
        # thresholds keep the parity of the estimate (every f of a board has it)
        thresh = max(h0, floor - (floor - h0) % 2)
        nodes = expanded = 0
        began = (0, t0)  # where the iteration under way began: nodes, perf_counter
        parallel = False  # once an iteration outgrew a slice, every later one runs on the threads
        alone = workers is None and threads.fixed and threads.granted == 1  # one thread, never more
        grows = not threads.fixed  # a grant that may change: threads join while an iteration runs
        last = None  # the last iteration's (nodes visited per depth, nodes): where the next one splits
        front = None  # A*+IDA*: the A* part built, IDA* below its open nodes (solver.search.frontier)

        def by_frontier(size: int, floor: int, from_root: bool):
            """The search on by A*+IDA* from ``floor``: the A* part built, its nodes counted
            (its bounds as iterations where it starts at the root); (the run, or a result
            where the A* part found the answer or a limit stopped it)."""
            nonlocal nodes, expanded, part, most, began
            from .frontier import FrontierRun

            left = None if node_limit is None else node_limit - nodes
            count = workers.count if workers is not None else threads.granted
            run = FrontierRun(self, board, size, max_depth, deadline, left, ceiling, workers, count)
            fr = run.fr
            nodes, expanded, most = nodes + fr.nodes, expanded + fr.expanded, max(most, count)
            part = (run.kept(), fr.nodes, len(fr.done) if from_root else 0)
            if from_root:
                done.extend(fr.done)
            began = (nodes, time.perf_counter())
            if fr.moves is not None:
                return None, result(fr.moves, len(fr.moves), nodes, expanded)
            if fr.stopped:
                return None, result(None, run.stopped_bound(floor, st.h0), nodes, expanded)
            return run, None

        if self.frontier and weight == 100:  # A*+IDA* from the root
            front, ended = by_frontier(self.frontier, floor, True)
            if ended is not None:
                return ended
            thresh = front.start(floor)
        while True:
            if ceiling is not None and thresh >= ceiling:  # every iteration below the known answer ended
                return result(None, thresh, nodes, expanded)
            if front is not None:  # below the A* part's open nodes
                began = (nodes, time.perf_counter())
                left = None if node_limit is None else node_limit - nodes
                status, moves, n, e, nxt = front.iteration(thresh, self.bpmx, deadline, left, nodes)
                nodes, expanded = nodes + n, expanded + e
                if status != "done":
                    return result(moves, thresh, nodes, expanded)
                last = (None, n)
            else:
                start_iteration(st, board.blank, h0, thresh, stack, state, self.fsm_root(board, fsm))
                v.nodes, v.expanded = nodes, expanded
                started = nodes
                began = (nodes, time.perf_counter())
                while not parallel:
                    most_slice = tuning().slice_nodes
                    slice_nodes = most_slice if alone or grows else min(most_slice, PARALLEL_AFTER)
                    if deadline is not None:  # a short limit is looked at often enough to hold
                        now = time.perf_counter()
                        slice_nodes = min(slice_nodes, slice_within(nodes, now - t0, deadline - now))
                    if node_limit is not None:
                        slice_nodes = min(slice_nodes, node_limit - v.nodes)
                    status = (
                        K.SLICE_SPENT
                        if slice_nodes <= 0
                        else K.search_slice(root, tables, stack, state, slice_nodes, bpmx, self.goal, weight)
                    )
                    raise_if_stopping()
                    nodes = v.nodes
                    expanded = v.expanded
                    if self.progress is not None:
                        self.progress.search(thresh, nodes)
                    if status == K.FOUND:
                        return result(path_moves(self.letters, stack, v.depth), thresh, nodes, expanded)
                    if status == K.ITERATION_DONE:
                        break
                    if (node_limit is not None and nodes >= node_limit) or (
                        deadline is not None and time.perf_counter() >= deadline
                    ):
                        return result(None, thresh, nodes, expanded)
                    if not grows:
                        parallel = not alone
                    elif threads.granted > 1:  # more threads granted mid-iteration: this one again on them?
                        left = None if deadline is None else deadline - time.perf_counter()
                        parallel = restart_pays(threads.granted, time.perf_counter() - began[1], left, done)
                if not parallel or last is None:
                    last = (stack.cnt.copy(), nodes - started)
                if not parallel:
                    nxt = v.next
                    # the next iterations on the split search once they are large, even on one thread:
                    # the threads granted while one runs join it
                    parallel = grows and nodes - started > PARALLEL_AFTER
                else:  # the iteration starts again from the root, on the threads
                    from .threads import IterationSpec, run_iteration

                    spec = IterationSpec(thresh, weight, bpmx, deadline, node_limit, nodes, last, max_depth, fsm)
                    if workers is not None:
                        out = workers.run_iteration(self, board, spec)
                    else:
                        out = run_iteration(self, board, threads, spec)
                    nodes += out.nodes
                    expanded += out.expanded
                    most = max(most, out.threads)
                    if out.status != "done":
                        began = (nodes - out.nodes, began[1])  # the iteration searched again from its root
                        return result(out.moves, thresh, nodes, expanded)
                    last = (out.counts, out.nodes)
                    nxt = out.next_threshold
            done.append((thresh, last[1], round(time.perf_counter() - began[1], 4)))
            began = (nodes, time.perf_counter())
            left = None if deadline is None else deadline - began[1]
            if fsm is not (fsm := self.pruning_after(fsm, nodes, left)):
                tables = self.kernel_tables(fsm)
            if nxt >= max_depth:
                # Thresholds stay below max_depth, so the stack never overflows and no
                # depth cut can hide a solution; past it the board stays unsolved.
                return result(None, thresh, nodes, expanded)
            if front is None and self._frontier_next(weight, last[1], nxt, ceiling):  # the rest by A*+IDA*
                front, ended = by_frontier(tuning().frontier_nodes, nxt, False)
                if ended is not None:
                    return ended
                nxt = front.start(nxt)
            thresh = nxt

    def _frontier_next(self, weight: int, iteration: int, nxt: int, ceiling) -> bool:
        """Whether the iterations after one of ``iteration`` nodes go on by A*+IDA* (the
        default policy, ``frontier_after`` of :class:`~solver.tuning.Tuning`)."""
        return (
            self.frontier is None
            and weight == 100
            and iteration >= tuning().frontier_after
            and (ceiling is None or nxt < ceiling)
            and frontier_pays(self.shape)
        )


def ida_star(board: Board, heuristic: Heuristic | None = None, **limits) -> SearchResult:
    """Optimal solution of ``board`` (see :class:`Searcher`).  Solvability is decided
    first (:func:`pdb_builder.solvability.decide`): an unsolvable board returns at once
    with status ``"unsolvable"`` and no moves, instead of searching until a limit."""
    verdict = decide(board)
    if not verdict.solvable:
        return SearchResult(None, None, False, 0, 0, 0.0, "unsolvable")
    if heuristic is None:
        heuristic = manhattan_heuristic(board.shape)
    return Searcher(heuristic).solve(board, **limits)
