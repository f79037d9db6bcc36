"""Boards in, verdicts and answers out: the per-board pipeline behind ``check`` and
``solve``.

Every board goes through: parse (already done by :mod:`pdb_builder.formats`),
validation, exact solvability, then (for ``solve``) search.  Every move string is
simulated before it is reported.  A bad board never stops the others.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from pdb_builder.board import Board, check_moves
from pdb_builder.errors import (EXIT_BAD_INPUT, EXIT_BAD_MOVES, EXIT_INTERNAL, EXIT_LIMIT, EXIT_OK,
                                EXIT_UNSOLVABLE)
from pdb_builder.formats import Record
from pdb_builder.solvability import decide

from .heuristic import manhattan_heuristic
from .ida import Searcher
from .tables import heuristic_for

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
        return STATUS_EXIT[self.status]

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
    extra = {"solvable": verdict.solvable, "method": verdict.method, "size": board.shape.size_text,
             "walls": len(board.shape.walls)}
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
    """One prepared searcher per board shape (tables loaded once, kernels compiled once).

    ``db_dir=None`` looks in the default database folder; ``use_db=False`` solves
    with wall-aware Manhattan + linear conflicts only."""

    def __init__(self, db_dir=None, use_db: bool = True, verify: bool = True):
        self.db_dir = db_dir
        self.use_db = use_db
        self.verify = verify
        self._searchers: dict = {}

    def searcher(self, board: Board) -> Searcher:
        key = board.shape
        if key not in self._searchers:
            if self.use_db:
                h = heuristic_for(board.shape, self.db_dir, verify=self.verify)
            else:
                h = manhattan_heuristic(board.shape)
            self._searchers[key] = Searcher(h)
        return self._searchers[key]


def solve_record(rec: Record, pool: SolverPool, time_limit: float | None = None,
                 node_limit: int | None = None) -> Outcome:
    checked = check_record(rec)
    if checked.status != "valid":
        return checked
    board = rec.board
    t0 = time.perf_counter()
    result = pool.searcher(board).solve(board, time_limit=time_limit, node_limit=node_limit)
    extra = {"size": board.shape.size_text, "walls": len(board.shape.walls), "h0": result.h0,
             "nodes": result.nodes, "seconds": round(time.perf_counter() - t0, 4),
             "lower_bound": result.lower_bound, "heuristic": result.heuristic}
    if rec.expected_length is not None:
        extra["expected_length"] = rec.expected_length
    if result.status != "solved":
        extra.update(moves=None, length=None, optimal=False)
        return Outcome(rec.index, str(board), "limit",
                       f"limit reached before an answer; lower bound {result.lower_bound}", extra)
    mc = check_moves(board, result.moves)
    if not mc.ok:  # never print an answer that does not simulate to the goal
        return Outcome(rec.index, str(board), "error", f"internal error: solver answer rejected: {mc.reason}", extra)
    extra.update(moves=result.moves, length=result.length, optimal=result.optimal)
    return Outcome(rec.index, str(board), "solved", None, extra)
