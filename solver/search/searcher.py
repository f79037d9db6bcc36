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
from pdb_builder.cores import Share
from pdb_builder.entries import bits_at, root_value
from pdb_builder.one_bit import WHOLE_SHARE, few_whole
from pdb_builder.solvability import decide

from .automaton import Automaton, automaton_for, deeper, neighbour_arrays, undo_only
from .driver import Drive
from .first_nodes import first_nodes_search, kernel_loaded
from .heuristic import (
    MAX_LOOKUP_TILES,
    Heuristic,
    TableReads,
    ZeroArrays,
    board_arrays,
    dual_arrays,
    goal_arrays,
    kernel_arrays,
    manhattan_heuristic,
    root_entry,
)
from .state import Backend, Root, SearchResult, private
from .threads import Threads

MAX_DEPTH = 1000  # deepest path the kernel keeps; longer thresholds stop as a limit


def _kernel():
    """solver.search.kernel, imported (and numba with it) at the first search that needs it."""
    from . import kernel as ida_kernel

    return ida_kernel


class Searcher:
    """Prepared arrays for one shape and heuristic; solves many boards of that shape."""

    def __init__(
        self,
        heuristic: Heuristic,
        bpmx: bool = True,
        packed: bool = True,
        prune: int | None = None,
        frontier: int | None = None,
        dual: bool = False,
        one_bit: bool | float = True,
    ):
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
        # how a dask worker opens the same tables (solver.search.remote.Recipe), where
        # they come from files; None: a cluster cannot share this searcher's iterations
        self.recipe = None
        self.automaton = undo_only(self.shape) if prune is None else automaton_for(self.shape, prune)
        self.searched = 0
        # A*+IDA* (solver.search.frontier) in its searches unless one says otherwise (solve's
        # ``frontier``): the open nodes the A* part keeps, at most; 0: IDA* alone; None: IDA*
        # alone until a long search of a shape where it pays (frontier_pays)
        self.frontier = frontier
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
        self._choose_reads(heuristic, packed, one_bit, dual)
        # the tables read on the board's dual too, where one alone could prune a child
        # (solver.search.heuristic.dual_arrays); no lookup when off
        self.dual = dual_arrays(heuristic, self.tables, self.lk_fixed, on=dual)
        g = self.shape.goal_blank
        self.bpar = np.array([max(self.shape.distances[g][c], 0) & 1 for c in range(self.shape.n)], dtype=np.int64)
        self.nlookups = len(heuristic.lookups)
        self.ngroups = heuristic.ngroups

    def _choose_reads(self, heuristic: Heuristic, packed: bool, one_bit: bool | float, dual: bool) -> None:
        """Which array the kernel reads for each lookup at every node (its one-byte table, its
        two-bit copy or its one-bit copy), and which tables it reads only at roots."""
        # lookup i's two-bit table where its file has one (unless packed=False), else the full one
        # (a table with zero-aware entries is read whole: they are worth more than the two-bit copy's memory)
        self.packed = tuple(
            np.ascontiguousarray(lk.packed, dtype=np.uint8)
            if packed and lk.packed is not None and lk.zero is None
            else None
            for lk in heuristic.lookups
        )
        # lookup i's one-bit copy (pdb_builder.one_bit) where its zero-aware file has one that marks
        # few placements whole (one_bit=True), at most a share one_bit of them (a float), or never (False)
        share = WHOLE_SHARE if one_bit is True else float(one_bit)
        self.one_bit = tuple(
            lk.zero.one_bit if lk.zero is not None and few_whole(lk.zero.one_bit, share) else None
            for lk in heuristic.lookups
        )
        # how the kernel reads lookup i: 0 its one-byte table, 1 its two-bit copy, 2 its one-bit copy
        self.lk_pk = np.array(
            [1 if p is not None else 2 if o is not None else 0 for p, o in zip(self.packed, self.one_bit)] or [0],
            dtype=np.int64,
        )
        # the kernel reads lookup i's table at lk_base[i] + rank (its byte, for a packed one);
        # self.tables and self.packed keep the arrays alive
        self.lk_full = np.array([t.ctypes.data for t in self.tables] or [0], dtype=np.int64)  # one-byte tables
        self.lk_base = self.lk_full.copy()
        for i, p in enumerate(self.packed):
            if p is not None:
                self.lk_base[i] = p.ctypes.data
        for i, o in enumerate(self.one_bit):
            if o is not None and o.bits is not None:  # (a copy whose bits are in its pairs reads no base)
                self.lk_base[i] = o.bits.ctypes.data
        self.zero = ZeroArrays(
            heuristic.lookups, one_bit=[int(a) if o is not None else 0 for a, o in zip(self.lk_full, self.one_bit)]
        )
        # lookup i's one-byte table read only at roots: behind its two-bit copy, or its one-bit copy's
        # side table (unless the dual reads the tables)
        at_root_only = [
            p is not None or (o is not None and o.side is not None and not dual)
            for p, o in zip(self.packed, self.one_bit)
        ]
        self.reads = TableReads(heuristic, at_root_only, self.one_bit)
        # those lookups' root values read from their files, not through the maps (heuristic.root_entry)
        self.root_only = frozenset(i for i, only in enumerate(at_root_only) if only)
        self.lk_root = np.array([0 if i in self.root_only else a for i, a in enumerate(self.lk_full)], dtype=np.int64)

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
            self.dual,
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
            self.lk_root,
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
        for i in self.root_only:
            lk = self.h.lookups[i]
            lk_val[i] = root_entry(lk.table, lk.guard, int(lk_rank[i]))
            group_sum[self.lk_group[i]] += lk_val[i]
        self.reads.at_root(lk_rank)  # the root's one-byte entries just read: checked before the search
        if self.nlookups:
            for i, p in enumerate(self.packed):
                if p is not None:  # the search tracks the relaxed values the two bits encode
                    r = int(lk_rank[i])
                    new = int(root_value(int(lk_val[i]), int(bits_at(int(p[r >> 2]), r))))
                    group_sum[self.lk_group[i]] += new - lk_val[i]
                    lk_val[i] = new
        self.zero.at_root(self.h.lookups, board.blank, lk_rank, lk_used, lk_val, group_sum, self.root_only)
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
        frontier=...,
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
        the two, :func:`solver.outcome.better`).  Both apply to optimal searches only.

        ``frontier``: A*+IDA* in this search (:mod:`solver.search.frontier`): the open
        nodes the A* part keeps from the root, at most (0: IDA* alone; None: from a long
        iteration on, where it pays); by default the searcher's own (``Searcher(frontier=)``)."""
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
            frontier,
        )
        result.nodes += spent
        result.expanded += spent_expanded
        result.seconds = time.perf_counter() - t0
        self.searched += result.nodes
        self.reads.wait()
        return result

    def where(self, threads) -> Backend:
        """Where a search of this searcher runs its large iterations (a
        :class:`~solver.search.state.Backend`).  ``threads``: a thread count, a
        :class:`~pdb_builder.cores.Share` or None (every core): this process's threads; or a
        backend (:class:`~solver.search.processes.Workers`, which imports this module); a
        cluster's workers that could not open this searcher's tables (it has no recipe) give
        way to this process's threads."""
        if not isinstance(threads, Backend):
            return Threads(threads)
        if threads.recipe and self.recipe is None:
            return Threads(None)
        return threads

    @property
    def names(self) -> list[str]:
        """The estimate's parts, as a result names them."""
        names = list(self.h.names) or ["manhattan+lc" if self.h.use_lc else "manhattan"]
        return names + ([self.h.goal_name] if self.h.goal_name else [])

    def _solve(
        self, board: Board, time_limit, node_limit, max_depth: int, weight: int, threads, known=(0, None), frontier=...
    ) -> SearchResult:
        """The search after its first nodes: the IDA* driver (:class:`~solver.search.driver.Drive`)."""
        frontier = self.frontier if frontier is ... else frontier
        return Drive(self, board, time_limit, node_limit, max_depth, weight, threads, known, frontier).run()


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
