"""The solver as a library: ``from solver import solve``.

The CLI's ``slidepdb solve`` runs the same code (:func:`solver.one_board.solve_record`);
this module only turns a board argument into a record and the outcome into a
:class:`Result` with the fields of ``--json``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pdb_builder.board import Board
from pdb_builder.errors import BoardError
from pdb_builder.formats import Record, parse_board_text

_POOLS: dict = {}  # (db_dir, use_db) -> SolverPool: tables loaded and kernels compiled once a process


@dataclass
class Result:
    """One board's answer: the fields of ``slidepdb solve --json``.

    ``status`` is ``solved``, ``unsolvable``, ``limit`` (stopped before any answer),
    ``invalid`` or ``error``; ``optimal`` is True only for a proof (an admissible
    estimate and a completed IDA* iteration at ``length``); otherwise ``lower_bound``
    is what the search proved and ``fallback`` how the answer was found."""

    board: str
    status: str
    moves: str | None = None
    length: int | None = None
    optimal: bool = False
    lower_bound: int | None = None
    nodes: int = 0
    seconds: float = 0.0
    heuristic: list[str] = field(default_factory=list)
    fallback: str | None = None
    error: str | None = None
    certificate: dict | None = None
    tables: dict = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        """The code ``slidepdb solve`` exits with for this board."""
        from .one_board import STATUS_EXIT

        return STATUS_EXIT[self.status]


def _board(board: str | Board, goal: str) -> Board:
    if isinstance(board, Board):
        return board
    if not isinstance(board, str):
        raise TypeError(f"board: expected a board string or a Board, not {type(board).__name__}")
    return parse_board_text(board, goal=goal)[1]  # BoardError names the fault


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
) -> Result:
    """Solve one board: solvability decided first, then IDA* on every database of
    ``db_dir`` that serves its shape (default ``$SLIDEPDB_DB_DIR`` or ``./databases``;
    ``use_db=False``: no files, wall-aware Manhattan distance and, on a walled
    board past its first second, tables of its layout built in memory), then, when a limit stopped
    it and ``fallback`` is on, a valid unproven answer within twice the limits more.

    ``board``: a DevQuiz line (``"3,3,123456708"``), a numeric board (``"1 2 3 4 5 6 7
    8 0"``, goal ``goal``) or a :class:`~pdb_builder.board.Board`.  Raises
    :class:`~pdb_builder.errors.BoardError` for a board that does not parse and
    :class:`~pdb_builder.errors.DatabaseError` for a damaged table (the CLI's exit
    codes 2 and 1); every other outcome is in the result.  ``threads``: threads for the
    optimal search (default: every core this process may use; :mod:`solver.parallel`)."""
    from .one_board import SolverPool, solve_record

    b = _board(board, goal)
    for name, value in (("time_limit", time_limit), ("node_limit", node_limit)):
        if value is not None and not value > 0:
            raise BoardError(f"{name}: expected a positive number, not {value!r}")
    key = (str(db_dir) if db_dir is not None else None, use_db)
    pool = _POOLS.get(key)
    if pool is None:
        pool = _POOLS[key] = SolverPool(db_dir, use_db)
    if threads is None:
        from .parallel import default_threads

        threads = default_threads()
    if not (isinstance(threads, int) and threads >= 1):
        raise BoardError(f"threads: expected a positive whole number, not {threads!r}")
    out = solve_record(Record(1, str(b), b), pool, time_limit, node_limit, fallback, threads=threads)
    e = out.extra
    return Result(
        board=out.board,
        status=out.status,
        moves=e.get("moves"),
        length=e.get("length"),
        optimal=bool(e.get("optimal")),
        lower_bound=e.get("lower_bound"),
        nodes=int(e.get("nodes", 0)),
        seconds=float(e.get("seconds", 0.0)),
        heuristic=list(e.get("heuristic") or []),
        fallback=e.get("fallback"),
        error=out.error,
        certificate=e.get("certificate"),
        tables=dict(e.get("tables") or {}),
    )
