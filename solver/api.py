"""The solver as a library: ``from solver import solve``.

The CLI's ``slidepdb solve`` runs the same code (:func:`solver.api.solve_record`);
this module only turns a board argument into a record and the outcome into a
:class:`Result` with the fields of ``--json``.
"""

from __future__ import annotations

import logging
import os
import time
import warnings
from collections import OrderedDict
from pathlib import Path

from pdb_builder import __version__
from pdb_builder.board import Board
from pdb_builder.cores import Share
from pdb_builder.errors import DatabaseError, OptionsError
from pdb_builder.formats import Record, parse_board_text
from pdb_builder.locks import reading
from pdb_builder.moves import check_moves
from pdb_builder.options import one_of, positive_number
from pdb_builder.solvability import decide

from .fallback import SHORTER
from .outcome import (
    Known,
    Outcome,
    Result,
    certificate,
    internal_error,
    search_cost,
    settle_by_bound,
    stated_length_clash,
)
from .search.heuristic import manhattan_heuristic
from .search.limits import Limits, interrupt_if_stopping, scaled
from .search.searcher import Searcher
from .search.state import SearchResult
from .tuning import tuning

log = logging.getLogger("slidepdb.solve")

LAYOUT_AFTER = 1.0  # seconds of Manhattan search on a walled board no table serves before its layout's tables
# (or the tuning's layout_after_nodes nodes, whichever comes first: solver.tuning)
SHORTER_PROOF = 0.25  # of its limits: a board's optimal search when it looks for a shorter answer (SHORTER)
RING_PROOF = 0.25  # ... and for an answer where the fallback found none before on its layout's tables (Known.ring):
# the fallback has the rest (on DevQuiz's ring boards its wider beams and staged search need 1-2 s each)
RETRY_SHARE = 0.25  # of its time limit, the least a board searches again after a table it read failed

_POOLS: dict = {}  # (db_dir, use_db) -> SolverPool: tables loaded and kernels compiled once a process


def missing_db_dir(db_dir) -> str | None:
    """The warning for a database folder that does not exist: the one asked for
    (``db_dir``, or ``$SLIDEPDB_DB_DIR``) or the default ``./databases``; None when it
    exists."""
    asked = db_dir if db_dir is not None else os.environ.get("SLIDEPDB_DB_DIR") or None
    folder = asked if asked is not None else "databases"
    if Path(folder).is_dir():
        return None
    if asked is None:
        return (
            "warning: no database folder ./databases here: solving without databases "
            "(build some with slidepdb build, or name a folder with --db-dir)"
        )
    via = "" if db_dir is not None else " ($SLIDEPDB_DB_DIR)"
    return f"warning: database folder {asked}{via} does not exist: solving without databases"


def _record(board: str | Board, goal: str) -> Record:
    """The board as a record: a benchmark line keeps its stated optimal length."""
    if isinstance(board, Board):
        return Record(1, str(board), board)
    if not isinstance(board, str):
        raise OptionsError(f"board: expected a board string or a Board, not {type(board).__name__}")
    _, b, ident, stated = parse_board_text(board, goal=goal)  # BoardError names the fault
    return Record(1, str(b), b, ident=ident, expected_length=stated)


def solve(
    board: str | Board,
    *,
    db_dir: str | Path | None = None,
    use_db: bool = True,
    time_limit: float | None = None,
    node_limit: int | None = None,
    fallback: bool = True,
    goal: str = "korf",
    threads: int | None = None,
    processes: int | None = None,
    scheduler=None,
    frontier: int | None = None,
) -> Result:
    """Solve one board: solvability decided first, then IDA* on every database of
    ``db_dir`` that serves its shape (default ``$SLIDEPDB_DB_DIR`` or ``./databases``;
    ``use_db=False``: no files, wall-aware Manhattan distance and, on a walled
    board past its first second, tables of its layout built in memory), then, when a limit stopped
    it and ``fallback`` is on, a valid unproven answer within twice the limits more.

    ``board``: a DevQuiz line (``"3,3,123456708"``), a numeric board (``"1 2 3 4 5 6 7
    8 0"``, goal ``goal``) or a :class:`~pdb_builder.board.Board`.  Raises
    :class:`~pdb_builder.errors.BoardError` for a board that does not parse,
    :class:`~pdb_builder.errors.OptionsError` for an option out of its range and
    :class:`~pdb_builder.errors.DatabaseError` for a damaged table (the CLI's exit
    codes 2 and 1); every other outcome is in the result.  A database folder that was
    asked for and does not exist gives a ``UserWarning`` (once per folder).  ``threads``: threads for the
    optimal search (default: every core this process may use; :mod:`solver.search.threads`).
    ``processes``: its large iterations searched by that many worker processes of this
    machine instead; ``scheduler``: by a dask cluster's workers (an address or a
    ``distributed.Client``), each opening ``db_dir`` itself
    (:mod:`solver.search.processes`).  At most one of the three.  ``frontier``: A*+IDA* from
    the root, the A* part keeping at most that many open nodes (:mod:`solver.search.frontier`;
    0: IDA* alone; None: the searcher's default, :func:`~solver.search.driver.frontier_pays`)."""
    one_of("goal", goal, ("korf", "devquiz"))
    positive_number("frontier", frontier or None, whole=True)
    positive_number("time_limit", time_limit)
    positive_number("node_limit", node_limit, whole=True)
    positive_number("threads", threads, whole=True)
    positive_number("processes", processes, whole=True)
    if sum(x is not None for x in (threads, processes, scheduler)) > 1:
        raise OptionsError("threads, processes, scheduler: give at most one")
    rec = _record(board, goal)
    key = (str(db_dir) if db_dir is not None else None, use_db)
    pool = _POOLS.get(key)
    if pool is None:
        missing = missing_db_dir(db_dir) if use_db else None
        if missing:
            warnings.warn(missing, UserWarning, stacklevel=2)
        pool = _POOLS[key] = SolverPool(db_dir, use_db)
    if processes is not None or scheduler is not None:
        from .search.processes import board_workers

        with board_workers(processes, scheduler) as workers:
            return Result.of(solve_record(rec, pool, time_limit, node_limit, fallback, workers, frontier=frontier))
    if threads is None:
        from .search.threads import default_threads

        threads = default_threads()
    return Result.of(solve_record(rec, pool, time_limit, node_limit, fallback, threads, frontier=frontier))


def _board_text(rec: Record) -> str:
    return str(rec.board) if rec.board is not None else rec.text


def check_record(rec: Record, moves: str | None = None, group: bool = True) -> Outcome:
    """Validate a board, decide solvability, and simulate ``moves`` if given;
    ``group=False`` leaves solvability undecided (``solvable`` None) where deciding it
    would need the blank's walk group (:func:`~pdb_builder.solvability.decide`)."""
    if rec.error:
        return Outcome(rec.index, rec.text, "invalid", rec.error)
    board = rec.board
    verdict = decide(board, group)
    out = Outcome.of_board(
        rec.index,
        _board_text(rec),
        "valid",
        None,
        board.shape,
        solvable=None if verdict is None else verdict.solvable,
        method=None if verdict is None else verdict.method,
    )
    if moves is not None:
        mc = check_moves(board, moves)
        out.moves, out.length, out.reaches_goal = moves, len(moves), mc.ok
        if not mc.ok:
            out.status, out.error, out.move_index = "illegal", mc.reason, mc.index
        return out
    if verdict is not None and not verdict.solvable:
        out.status, out.error = "unsolvable", verdict.reason
    return out


class SolverPool:
    """Prepared searchers by board shape (tables loaded once, kernels compiled once),
    the tuning's ``searchers`` most recently used kept: a batch over hundreds of layouts
    holds the tables of a few at a time (see also :class:`pdb_builder.db_cache.DatabaseCache`).

    ``db_dir=None`` looks in the default database folder; ``use_db=False`` solves
    without files (:func:`optimal_search`); ``threads``: threads for each
    board's optimal search (:mod:`solver.search.threads`); ``python_first=False`` loads the
    compiled kernel at the first board (a batch needs it anyway); ``go_on``: a table
    file that cannot be read, or fails its checksums during a search, is left out and
    the board solved again without it, the outcome naming it (``tables_left_out``),
    instead of raising :class:`~pdb_builder.errors.DatabaseError` (``slidepdb run``);
    ``frontier``: A*+IDA* with at most that many open nodes (:mod:`solver.search.frontier`;
    0: IDA* alone; None: the searcher's default)."""

    LAYOUT_SEARCHERS = 2  # kept in memory (tens of MB each; a batch rarely meets a layout twice running)

    def __init__(
        self,
        db_dir=None,
        use_db: bool = True,
        verify: bool = True,
        threads: int = 1,
        python_first: bool = True,
        progress=None,
        go_on: bool = False,
        frontier: int | None = None,
    ):
        self.db_dir = db_dir
        self.frontier = frontier
        self.left_out: dict | None = {} if go_on else None  # file path -> why it was left out
        self.progress = progress  # handed to every searcher (Searcher.progress) and told of the fallback
        self.python_first = python_first  # see Searcher.python_first
        self.use_db = use_db
        self.verify = verify
        self.threads = threads  # for each board's optimal search (solver.search.threads)
        self._searchers: OrderedDict = OrderedDict()
        self._layouts: OrderedDict = OrderedDict()  # shape -> in-memory layout searcher (or None: none fits)

    def searcher(self, board: Board) -> Searcher:
        key = board.shape
        if key in self._searchers:
            self._searchers.move_to_end(key)
            return self._searchers[key]
        from .search.remote import Recipe  # (how a dask worker opens the same tables)

        if self.use_db:
            from pdb_builder.storage import default_db_dir

            from .search.tables import heuristic_for  # (h5py: not imported by a --no-db process)

            h = heuristic_for(board.shape, self.db_dir, verify=self.verify, left_out=self.left_out)
            db = str(default_db_dir(self.db_dir).resolve())  # (a cluster's worker may start elsewhere)
            gone = tuple(str(Path(p).resolve()) for p in self.left_out or ())
            recipe = Recipe(board.shape, db, True, self.verify, gone)
        else:
            h, recipe = manhattan_heuristic(board.shape), Recipe(board.shape, use_db=False)
        self._searchers[key] = Searcher(h, frontier=self.frontier)
        self._searchers[key].recipe = recipe
        self._searchers[key].python_first = self.python_first
        self._searchers[key].progress = self.progress
        while len(self._searchers) > tuning().searchers:
            self._searchers.popitem(last=False)
        return self._searchers[key]

    def leave_out(self, exc: DatabaseError) -> bool:
        """Leave out the file ``exc`` names from now on (its shapes' searchers made
        again); whether the board should be solved again (False: the pool does not
        go on, or the file is left out already)."""
        if self.left_out is None or exc.path is None or exc.path in self.left_out:
            return False
        self.left_out[exc.path] = str(exc)
        self._searchers.clear()
        return True

    def layout_searcher(self, shape, limits) -> Searcher | None:
        """Wall-aware Manhattan + linear conflicts + small tables of ``shape``'s exact
        layout built in memory (:func:`solver.fallback.ladder.layout_searcher`), the
        :data:`LAYOUT_SEARCHERS` most recently used kept; None when no partition fits or
        ``limits`` ran out while building (then not kept)."""
        if shape in self._layouts:
            self._layouts.move_to_end(shape)
            return self._layouts[shape]
        from .fallback import ladder as fallback  # (beams, staged search: compiled kernels, loaded when needed)

        searcher = fallback.layout_searcher(shape, limits, use_lc=True)
        if searcher is None and limits.out():
            return None
        if searcher is not None:
            searcher.python_first = self.python_first
            searcher.progress = self.progress
        self._layouts[shape] = searcher
        while len(self._layouts) > self.LAYOUT_SEARCHERS:
            self._layouts.popitem(last=False)
        return searcher


def solve_record(
    rec: Record,
    pool: SolverPool,
    time_limit: float | None = None,
    node_limit: int | None = None,
    fallback: bool | str = True,
    threads=None,
    known: Known | None = None,
    frontier=...,
) -> Outcome:
    """Optimal search within the limits; when a limit stops it and ``fallback`` is on,
    :func:`solver.fallback.ladder.fallback_search` gives a valid answer within
    ``FALLBACK_TIMES`` more limits, reported ``optimal: false`` with the lower bound
    the optimal search proved and how it was found (``fallback``).  ``threads``: for
    the optimal search, a count or a :class:`~pdb_builder.cores.Share` (default: the
    pool's).  ``known``: what earlier attempts at the board proved and found: the search
    starts at their lower bound and stops where their answer would be proven
    (:meth:`~solver.search.searcher.Searcher.solve`'s ``floor`` and ``ceiling``); with
    an answer known there is no fallback, every second goes to the proof, and the caller
    keeps the better outcome (:func:`solver.outcome.better`); unless ``fallback`` is
    :data:`~solver.fallback.SHORTER`: the proof gets :data:`SHORTER_PROOF` of the
    limits, then :func:`solver.fallback.ladder.shorter_search` looks for an answer
    shorter than the known one (a ``limit`` when it finds none).  ``known.ring``: the
    optimal search gets :data:`RING_PROOF` of the limits, and the fallback, which goes to
    the layout's tables first (:class:`~solver.outcome.Known`), its own and the rest.
    ``frontier``: A*+IDA* in the optimal search (:meth:`~solver.search.searcher.Searcher.solve`;
    by default the pool's)."""
    checked = check_record(rec)
    if checked.status != "valid":
        return checked
    began = time.perf_counter()
    try:
        if known is not None and known.answer is not None and fallback != SHORTER:
            fallback = False
        elif fallback == SHORTER and (known is None or known.answer is None):
            fallback = True  # nothing to be shorter than: the fallback's own steps
        threads = pool.threads if threads is None else threads
        return _solve_valid(rec, pool, time_limit, node_limit, fallback, threads, known, frontier)
    except DatabaseError as exc:
        if pool.leave_out(exc):  # a table failed its checksums while the board searched: again without it
            log.warning("%s; the boards go on without it", exc)
            if time_limit is not None:  # what the limit has left (a quarter of it at least, for an answer)
                time_limit = max(time_limit - (time.perf_counter() - began), RETRY_SHARE * time_limit)
            return solve_record(rec, pool, time_limit, node_limit, fallback, threads, known, frontier)
        raise  # a damaged or unreadable table: every board of its shape would fail; the run stops naming it
    except Exception as exc:  # noqa: BLE001 - one board's failure never stops a batch
        interrupt_if_stopping(exc)  # SIGTERM or Ctrl-C, which a library turned into another exception
        if os.environ.get("SLIDEPDB_DEBUG"):
            raise
        return internal_error(rec.index, rec.board, exc)


def _solve_valid(rec: Record, pool: SolverPool, time_limit, node_limit, fallback, threads, known, frontier) -> Outcome:
    board = rec.board
    t0 = time.perf_counter()
    searcher = pool.searcher(board)
    with reading(searcher.h.files):  # no table file it reads is removed meanwhile (pdb_builder.locks)
        return _search(rec, searcher, pool, time_limit, node_limit, fallback, threads, known, t0, frontier)


def _search(
    rec: Record, searcher, pool: SolverPool, time_limit, node_limit, fallback, threads, known, t0, frontier=...
) -> Outcome:
    board = rec.board
    shorter = fallback == SHORTER
    ring = None if shorter or known is None else known.ring
    share = SHORTER_PROOF if shorter else RING_PROOF if ring is not None else 1  # of the limits, for the optimal search
    proof = _scaled_limits(time_limit, node_limit, share)
    result, layout = optimal_search(board, searcher, pool, *proof, threads, known, frontier)
    nodes, bound = result.nodes, result.lower_bound
    moves = result.moves
    how = failed = None
    limited = time_limit is not None or node_limit is not None
    if result.status != "solved" and fallback and limited and not (shorter and bound >= known.answer):
        from .fallback.ladder import FALLBACK_TIMES, fallback_search, shorter_search  # (compiled kernels: when needed)

        if isinstance(threads, Share):
            threads.release()  # the fallback runs on one thread: the batch may give the others to other items
        if pool.progress is not None:
            pool.progress.phase("fallback (a valid answer, not proven)")
        if shorter:  # a board with an answer: weighted IDA* for a shorter one
            moves, how, more = shorter_search(searcher, board, time_limit, node_limit, known.answer)
        else:  # with the part of the limits the optimal search was not given
            fb_limits = _scaled_limits(time_limit, node_limit, 1 + (1 - share) / FALLBACK_TIMES)
            found = fallback_search(searcher, board, *fb_limits, bound, layout, ring is None, ring)
            moves, how, more, failed = found
        nodes += more
        searcher.reads.wait()  # nothing reported before the tables read have passed their checksums
    out = Outcome.of_board(rec.index, str(board), "solved", None, board.shape, h0=result.h0, nodes=nodes)
    out.seconds = round(time.perf_counter() - t0, 4)
    out.lower_bound, out.heuristic = bound, result.heuristic
    out.tables = {name: list(sums) for name, sums in searcher.h.checksums.items()}
    out.tables_left_out = dict(searcher.h.left_out) or None
    out.version, out.fallback = __version__, how
    if failed:  # no answer: for the next try (solver.run.answer_pass.known_for_retry)
        out.ladder_failed = [failed[0], list(failed[1])]  # table bytes a pattern, beam widths
    if result.threads > 1:
        out.threads = result.threads  # the most that searched it at once
    if not result.optimal:  # what the next attempt's iterations cost: solver.run.forecast
        out.iterations, out.unfinished = search_cost(result)
    if known is not None and known.lower_bound > result.h0:
        out.floor = known.lower_bound  # proven by an earlier attempt: the first iteration began there
    out.expected_length = rec.expected_length
    if moves is None:
        what = f"no answer shorter than {known.answer} moves" if shorter else "limit reached before an answer"
        out.status, out.error, out.optimal = "limit", f"{what}; lower bound {bound}", False
        return out
    mc = check_moves(board, moves)
    if not mc.ok:  # never print an answer that does not simulate to the goal
        out.status, out.error = "error", f"internal error: solver answer rejected: {mc.reason}"
        return out
    out.moves, out.length, out.optimal = moves, len(moves), result.status == "solved" and result.optimal
    settle_by_bound(out)
    if out.optimal:
        out.certificate = certificate(out, out.tables, how="search" if how is None else "bound")
    stated_length_clash(out)
    return out


def _scaled_limits(time_limit, node_limit, share: float) -> tuple:
    """``share`` of a time limit and a node limit (None stays None; nodes whole)."""
    return scaled(time_limit, share), None if node_limit is None else int(node_limit * share)


def optimal_search(
    board: Board, searcher: Searcher, pool: SolverPool, time_limit, node_limit, threads=1, known=None, frontier=...
) -> tuple[SearchResult, Searcher | None]:
    """IDA* within the limits with ``searcher`` (the pool's for ``board``): (its
    result, the searcher of tables built in memory for it or None); ``known``
    (:class:`~solver.outcome.Known`): where it starts and stops; ``frontier``: A*+IDA* in
    it (:meth:`~solver.search.searcher.Searcher.solve`; by default the searcher's).

    A walled board that no table serves (``--no-db``, or a folder without its
    shape) is searched with Manhattan distance for :data:`LAYOUT_AFTER` seconds (or
    the tuning's ``layout_after_nodes`` nodes) at most: most such boards end there.  Then
    small tables of its exact layout are built in memory (a second or two; a walled
    ring misleads Manhattan distance, which counts no tile in another's way) and
    the search starts again on them with what is left of the limits.  Both
    estimates are admissible, so the lower bound is the larger of the two searches'
    and the initial estimate the larger of their two."""
    bounds = {} if known is None else {"floor": known.lower_bound, "ceiling": known.answer}
    bounds["frontier"] = frontier
    if not board.shape.walls or searcher.h.lookups:
        return searcher.solve(board, time_limit=time_limit, node_limit=node_limit, threads=threads, **bounds), None
    limits = Limits(time_limit, node_limit)
    first = searcher.solve(
        board,
        time_limit=_least(time_limit, LAYOUT_AFTER),
        node_limit=_least(node_limit, tuning().layout_after_nodes),
        threads=threads,
        **bounds,
    )
    limits.spend(first.nodes)
    answer = None if known is None else known.answer
    if first.status == "solved" or limits.out() or (answer is not None and first.lower_bound >= answer):
        return first, None
    layout = pool.layout_searcher(board.shape, limits)
    if limits.out():  # the limits ran out while building
        first.nodes = limits.spent
        return first, layout
    bounds["floor"] = first.lower_bound  # what the first search proved (at least the floor it had)
    second = (layout or searcher).solve(
        board, time_limit=limits.seconds_left(), node_limit=limits.nodes(), threads=threads, **bounds
    )
    limits.spend(second.nodes)
    second.nodes, second.expanded = limits.spent, first.expanded + second.expanded
    second.lower_bound = max(first.lower_bound, second.lower_bound)
    second.h0 = max(first.h0, second.h0)
    second.threads = max(first.threads, second.threads)
    second.seconds += first.seconds
    return second, layout


def _least(limit, cap):
    return cap if limit is None else min(limit, cap)
