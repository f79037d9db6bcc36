"""Shorter unproven answers: each stretch of the path replaced by an optimal one.

A fallback answer (beam, weighted IDA*, staged search) wanders: between two of its
states a few dozen moves apart there is often a much shorter way.  :func:`polish`
slides a window along the path and solves "from the state at its start to the state
at its end" optimally, by IDA* with wall-aware Manhattan + linear conflicts on a
board whose goal is the window's end state (tile ids are just labels).  A window is
replaced when that is shorter; the result is simulated like every answer.
"""

from __future__ import annotations

from pdb_builder.board import Board, Shape

from ..search.heuristic import manhattan_heuristic
from ..search.limits import Limits
from ..search.searcher import Searcher

PASSES = ((36, 1_000_000), (48, 3_000_000))  # (moves per window, IDA* nodes per window), in turn
REPEATS = 3  # passes of one window size at most


def _states(board: Board, moves: str) -> list[tuple[int, ...]]:
    """Every arrangement along ``moves`` (legal ones), the start included."""
    cells = list(board.cells)
    b = cells.index(0)
    out = [tuple(cells)]
    for m in moves:
        c = board.shape.move_target(b, m)
        cells[b], cells[c] = cells[c], 0
        b = c
        out.append(tuple(cells))
    return out


def _pass(board: Board, moves: str, window: int, node_limit: int, limits: Limits) -> str:
    shape = board.shape
    states = _states(board, moves)
    i = 0
    while i < len(moves) - 1:
        if limits.out():
            break
        j = min(i + window, len(moves))
        target = Shape(shape.width, shape.height, states[j], "custom")
        res = Searcher(manhattan_heuristic(target)).solve(
            Board(target, states[i]), node_limit=limits.nodes(node_limit), time_limit=limits.seconds_left()
        )
        limits.spend(res.nodes)
        if res.status == "solved" and res.length < j - i:
            moves = moves[:i] + res.moves + moves[j:]
            states = states[:i] + _states(Board(shape, states[i]), res.moves)[:-1] + states[j:]
        i += max(window // 2, 1)
    return moves


def polish(
    board: Board, moves: str, time_limit: float | None = None, passes=PASSES, limits: Limits | None = None
) -> str:
    """``moves`` (from ``board`` to its goal) with windows, half overlapping, replaced
    by optimal paths between their ends where shorter: passes of each (window, node
    limit) of ``passes`` in turn, repeated while they gain (at most :data:`REPEATS`
    times); stops at ``time_limit`` seconds or when ``limits`` (which the windows'
    nodes are spent from) runs out, with what it has."""
    limits = (limits or Limits()).within(time_limit)
    for window, node_limit in passes:
        for _ in range(REPEATS):
            shorter = _pass(board, moves, window, node_limit, limits)
            if len(shorter) == len(moves):
                break
            moves = shorter
    return moves
