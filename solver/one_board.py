"""One board: validate, decide solvability, search, fall back, and judge what two
answers for the same board say (the proof, its certificate, contradictions).

Every board goes through: parse (already done by :mod:`pdb_builder.formats`),
validation, exact solvability, then (for ``solve``) search.  Every move string is
simulated before it is reported.  A bad board never stops the others.
"""

from __future__ import annotations

import os
import time
from collections import OrderedDict
from dataclasses import dataclass, field

from pdb_builder import __version__
from pdb_builder.board import Board
from pdb_builder.errors import (
    EXIT_BAD_INPUT,
    EXIT_BAD_MOVES,
    EXIT_INTERNAL,
    EXIT_LIMIT,
    EXIT_OK,
    EXIT_UNSOLVABLE,
    DatabaseError,
)
from pdb_builder.formats import Record
from pdb_builder.moves import check_moves
from pdb_builder.solvability import decide

from .budget import Budget, interrupt_if_stopping
from .heuristic import manhattan_heuristic
from .ida import Searcher, SearchResult

LAYOUT_AFTER = 1.0  # seconds of Manhattan search on a walled board no table serves before its layout's tables
LAYOUT_AFTER_NODES = 20_000_000  # ... or nodes, whichever comes first

STATUS_EXIT = {
    "valid": EXIT_OK,
    "solved": EXIT_OK,
    "invalid": EXIT_BAD_INPUT,
    "unsolvable": EXIT_UNSOLVABLE,
    "limit": EXIT_LIMIT,
    "illegal": EXIT_BAD_MOVES,
    "error": EXIT_INTERNAL,
}


@dataclass
class Outcome:
    """What happened to one board; ``as_json`` is the ``--json`` record."""

    index: int
    board: str
    status: str
    error: str | None = None
    extra: dict = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        code = STATUS_EXIT[self.status]
        return max(code, EXIT_INTERNAL) if self.extra.get("contradiction") else code

    def as_json(self) -> dict:
        out = {"index": self.index, "board": self.board, "status": self.status, "error": self.error}
        out.update(self.extra)
        return out


def _board_text(rec: Record) -> str:
    return str(rec.board) if rec.board is not None else rec.text


def check_record(rec: Record, moves: str | None = None) -> Outcome:
    """Validate a board, decide solvability, and simulate ``moves`` if given."""
    if rec.error:
        return Outcome(rec.index, rec.text, "invalid", rec.error)
    board = rec.board
    verdict = decide(board)
    extra = {
        "solvable": verdict.solvable,
        "method": verdict.method,
        "size": board.shape.size_text,
        "walls": len(board.shape.walls),
    }
    if moves is not None:
        mc = check_moves(board, moves)
        extra.update(moves=moves, length=len(moves), reaches_goal=mc.ok)
        if not mc.ok:
            extra["move_index"] = mc.index
            return Outcome(rec.index, _board_text(rec), "illegal", mc.reason, extra)
        return Outcome(rec.index, _board_text(rec), "valid", None, extra)
    if not verdict.solvable:
        return Outcome(rec.index, _board_text(rec), "unsolvable", verdict.reason, extra)
    return Outcome(rec.index, _board_text(rec), "valid", None, extra)


class SolverPool:
    """Prepared searchers by board shape (tables loaded once, kernels compiled once),
    the :data:`SEARCHERS` most recently used kept: a batch over hundreds of layouts
    holds the tables of a few at a time (see also :class:`pdb_builder.storage.DatabaseCache`).

    ``db_dir=None`` looks in the default database folder; ``use_db=False`` solves
    without files (:func:`optimal_search`); ``threads``: threads for each
    board's optimal search (:mod:`solver.parallel`); ``python_first=False`` loads the
    compiled kernel at the first board (a batch needs it anyway)."""

    SEARCHERS = 8
    LAYOUTS = 2  # in-memory layout searchers kept (tens of MB each; a batch rarely meets a layout twice running)

    def __init__(
        self, db_dir=None, use_db: bool = True, verify: bool = True, threads: int = 1, python_first: bool = True
    ):
        self.db_dir = db_dir
        self.python_first = python_first  # see Searcher.python_first
        self.use_db = use_db
        self.verify = verify
        self.threads = threads  # for each board's optimal search (solver.parallel)
        self._searchers: OrderedDict = OrderedDict()
        self._layouts: OrderedDict = OrderedDict()  # shape -> in-memory layout searcher (or None: none fits)

    def searcher(self, board: Board) -> Searcher:
        key = board.shape
        if key in self._searchers:
            self._searchers.move_to_end(key)
            return self._searchers[key]
        if self.use_db:
            from .tables import heuristic_for  # (h5py: not imported by a --no-db process)

            h = heuristic_for(board.shape, self.db_dir, verify=self.verify)
        else:
            h = manhattan_heuristic(board.shape)
        self._searchers[key] = Searcher(h)
        self._searchers[key].python_first = self.python_first
        while len(self._searchers) > self.SEARCHERS:
            self._searchers.popitem(last=False)
        return self._searchers[key]

    def layout_searcher(self, shape, budget) -> Searcher | None:
        """Wall-aware Manhattan + linear conflicts + small tables of ``shape``'s exact
        layout built in memory (:func:`solver.fallback.layout_searcher`), the
        :data:`LAYOUTS` most recently used kept; None when no partition fits or
        ``budget`` ran out while building (then not kept)."""
        if shape in self._layouts:
            self._layouts.move_to_end(shape)
            return self._layouts[shape]
        from . import fallback  # (beams, staged search: compiled kernels, loaded when needed)

        searcher = fallback.layout_searcher(shape, budget, use_lc=True)
        if searcher is None and budget.out():
            return None
        if searcher is not None:
            searcher.python_first = self.python_first
        self._layouts[shape] = searcher
        while len(self._layouts) > self.LAYOUTS:
            self._layouts.popitem(last=False)
        return searcher


def solve_record(
    rec: Record,
    pool: SolverPool,
    time_limit: float | None = None,
    node_limit: int | None = None,
    fallback: bool = True,
    threads: int | None = None,
) -> Outcome:
    """Optimal search within the limits; when a limit stops it and ``fallback`` is on,
    :func:`solver.fallback.fallback_search` gives a valid answer within
    ``FALLBACK_SHARE`` more limits, reported ``optimal: false`` with the lower bound
    the optimal search proved and how it was found (``fallback``).  ``threads``: for
    the optimal search (default: the pool's)."""
    checked = check_record(rec)
    if checked.status != "valid":
        return checked
    try:
        return _solve_valid(rec, pool, time_limit, node_limit, fallback, pool.threads if threads is None else threads)
    except DatabaseError:
        raise  # a damaged or unreadable table: every board of its shape would fail; the run stops naming it
    except Exception as exc:  # noqa: BLE001 - one board's failure never stops a batch
        interrupt_if_stopping(exc)  # SIGTERM or Ctrl-C, which a library turned into another exception
        if os.environ.get("SLIDEPDB_DEBUG"):
            raise
        return Outcome(
            rec.index,
            str(rec.board),
            "error",
            f"internal error: {type(exc).__name__}: {exc}",
            {
                "size": rec.board.shape.size_text,
                "walls": len(rec.board.shape.walls),
                "moves": None,
                "length": None,
                "optimal": False,
            },
        )


def _solve_valid(rec: Record, pool: SolverPool, time_limit, node_limit, fallback, threads: int) -> Outcome:
    board = rec.board
    t0 = time.perf_counter()
    searcher = pool.searcher(board)
    result, layout = optimal_search(board, searcher, pool, time_limit, node_limit, threads)
    nodes, bound = result.nodes, result.lower_bound
    moves = result.moves
    how = None
    if result.status != "solved" and fallback and (time_limit is not None or node_limit is not None):
        from .fallback import fallback_search  # (beams, staged search: compiled kernels, loaded when needed)

        moves, how, more = fallback_search(searcher, board, time_limit, node_limit, bound, layout=layout)
        nodes += more
        searcher.reads.wait()  # nothing reported before the tables read have passed their checksums
    extra = {
        "size": board.shape.size_text,
        "walls": len(board.shape.walls),
        "h0": result.h0,
        "nodes": nodes,
        "seconds": round(time.perf_counter() - t0, 4),
        "lower_bound": bound,
        "heuristic": result.heuristic,
        "tables": {name: list(sums) for name, sums in searcher.h.checksums.items()},
        "version": __version__,
    }
    if how is not None:
        extra["fallback"] = how
    if rec.expected_length is not None:
        extra["expected_length"] = rec.expected_length
    if moves is None:
        extra.update(moves=None, length=None, optimal=False)
        return Outcome(
            rec.index, str(board), "limit", f"limit reached before an answer; lower bound {extra['lower_bound']}", extra
        )
    mc = check_moves(board, moves)
    if not mc.ok:  # never print an answer that does not simulate to the goal
        return Outcome(rec.index, str(board), "error", f"internal error: solver answer rejected: {mc.reason}", extra)
    extra.update(moves=moves, length=len(moves), optimal=result.status == "solved" and result.optimal)
    settle_by_bound(extra)
    if extra["optimal"]:
        extra["certificate"] = certificate(extra, extra["tables"], how="search" if how is None else "bound")
    return Outcome(rec.index, str(board), "solved", None, extra)


def optimal_search(
    board: Board, searcher: Searcher, pool: SolverPool, time_limit, node_limit, threads: int = 1
) -> tuple[SearchResult, Searcher | None]:
    """IDA* within the limits with ``searcher`` (the pool's for ``board``): (its
    result, the searcher of tables built in memory for it or None).

    A walled board that no table serves (``--no-db``, or a folder without its
    shape) is searched with Manhattan distance for :data:`LAYOUT_AFTER` seconds (or
    :data:`LAYOUT_AFTER_NODES` nodes) at most: most such boards end there.  Then
    small tables of its exact layout are built in memory (a second or two; a walled
    ring misleads Manhattan distance, which counts no tile in another's way) and
    the search starts again on them with what is left of the limits.  Both
    estimates are admissible, so the lower bound is the larger of the two searches'
    and the initial estimate the larger of their two."""
    if not board.shape.walls or searcher.h.lookups:
        return searcher.solve(board, time_limit=time_limit, node_limit=node_limit, threads=threads), None
    budget = Budget(time_limit, node_limit)
    first = searcher.solve(
        board,
        time_limit=_least(time_limit, LAYOUT_AFTER),
        node_limit=_least(node_limit, LAYOUT_AFTER_NODES),
        threads=threads,
    )
    budget.spend(first.nodes)
    if first.status == "solved" or budget.out():
        return first, None
    layout = pool.layout_searcher(board.shape, budget)
    if budget.out():  # the limits ran out while building
        first.nodes = budget.spent
        return first, layout
    second = (layout or searcher).solve(
        board, time_limit=budget.seconds_left(), node_limit=budget.nodes(), threads=threads
    )
    budget.spend(second.nodes)
    second.nodes, second.expanded = budget.spent, first.expanded + second.expanded
    second.lower_bound = max(first.lower_bound, second.lower_bound)
    second.h0 = max(first.h0, second.h0)
    second.seconds += first.seconds
    return second, layout


def _least(limit, cap):
    return cap if limit is None else min(limit, cap)


def certificate(extra: dict, checksums: dict, how: str) -> dict:
    """Why an answer is optimal, for the record: the threshold of the IDA* iteration
    that completed (``how="search"``: the iteration at the answer's length found it
    after every lower one completed without a solution; ``"bound"``: an iteration at
    the answer's length was reached, so every lower one completed), the answer's
    length, and the tables the estimate read (file name -> each table's sha256, 16
    hex digits; none: wall-aware Manhattan distance and linear conflicts only)."""
    return {"threshold": extra["lower_bound"], "length": extra["length"], "how": how, "tables": checksums}


def settle_by_bound(extra: dict) -> None:
    """Flag an answer optimal when it is as long as the lower bound and that bound is
    past the initial estimate: it is then the threshold of an IDA* iteration on an
    admissible estimate, reached only after every iteration below it completed without
    a solution, so nothing shorter exists.  (A fallback answer often meets it: the
    optimal search ran out of time in the last iteration.)  ``proof`` records it."""
    length, bound = extra.get("length"), extra.get("lower_bound")
    if not extra.get("optimal") and length is not None and length == bound and bound > extra.get("h0", bound):
        extra["optimal"] = True
        extra["proof"] = "length equals the lower bound"


def _rank(o: Outcome):
    length = o.extra.get("length")
    return (o.status == "solved", bool(o.extra.get("optimal")), -(length if length is not None else 1 << 30))


def better(old: Outcome, new: Outcome) -> Outcome:
    """Of two outcomes for one board: proven beats unproven beats none, then the
    shorter answer; the higher of their lower bounds is kept either way.

    Both answers were simulated, so one shorter than the other's proven length or
    lower bound is a contradiction (a table or a search is wrong): the shorter one is
    kept, nothing is called optimal, and ``extra["contradiction"]`` says what met
    (the outcome's exit code is then 1)."""
    clash = contradiction(old, _answer_length(new)) or contradiction(new, _answer_length(old))
    if clash:
        keep = min((o for o in (old, new) if o.extra.get("length") is not None), key=lambda o: o.extra["length"])
        keep.extra.update(optimal=False, contradiction=clash)
        keep.extra.pop("proof", None)
        length = keep.extra["length"]
        keep.extra["lower_bound"] = max(
            [b for b in (o.extra.get("lower_bound") for o in (old, new)) if b is not None and b <= length] or [0]
        )
        return keep
    keep = new if _rank(new) >= _rank(old) else old
    bounds = [o.extra.get("lower_bound") for o in (old, new) if o.extra.get("lower_bound") is not None]
    if bounds:
        keep.extra["lower_bound"] = max(bounds)
        settle_by_bound(keep.extra)
        if keep.extra.get("optimal") and "certificate" not in keep.extra:  # proven by the other's bound
            tables = {**old.extra.get("tables", {}), **new.extra.get("tables", {})}
            keep.extra["certificate"] = certificate(keep.extra, tables, how="bound")
    return keep


def _answer_length(o: Outcome) -> int | None:
    return o.extra.get("length") if o.status == "solved" else None


def contradiction(claim: Outcome, length: int | None) -> str | None:
    """What is wrong when a valid (simulated) answer of ``length`` moves is shorter
    than ``claim``'s proven length or lower bound, else None."""
    if length is None:
        return None
    proven = claim.extra.get("length") if claim.status == "solved" and claim.extra.get("optimal") else None
    bound = claim.extra.get("lower_bound")
    if proven is not None and length < proven:
        what = f"an answer of {length} moves is shorter than the {proven} called optimal"
    elif bound is not None and length < bound:
        what = f"an answer of {length} moves is shorter than the proven lower bound {bound}"
    else:
        return None
    tables = "; ".join(claim.extra.get("heuristic") or []) or "Manhattan distance"
    return f"contradiction on board {claim.board}: {what} (that claim's tables: {tables}); its optimal claim withdrawn"
