"""Simulating move strings: every answer is checked this way before it is reported."""

from __future__ import annotations

from dataclasses import dataclass

from .board import BLANK, MOVE_DELTA, WALL, Board


@dataclass(frozen=True)
class MoveCheck:
    """Outcome of simulating a move string: ``ok`` when every move is legal and the
    goal is reached; otherwise ``index`` (0-based) and ``reason`` of the first
    illegal move, or ``reason`` saying where the legal moves end."""

    ok: bool
    legal: bool
    index: int | None
    reason: str
    final: tuple[int, ...]


def check_moves(board: Board, moves: str) -> MoveCheck:
    shape = board.shape
    cells = list(board.cells)
    blank = board.blank
    for i, m in enumerate(moves):
        if m not in MOVE_DELTA:
            return MoveCheck(
                False, False, i, f"move {i + 1} {m!r}: unknown letter (expected L, R, U or D)", tuple(cells)
            )
        target = shape.move_target(blank, m)
        if target is None:
            return MoveCheck(
                False, False, i, f"move {i + 1} {m!r}: the blank at cell {blank} would leave the board", tuple(cells)
            )
        if cells[target] == WALL:
            return MoveCheck(
                False,
                False,
                i,
                f"move {i + 1} {m!r}: the blank at cell {blank} would enter wall cell {target}",
                tuple(cells),
            )
        cells[blank], cells[target] = cells[target], BLANK
        blank = target
    final = tuple(cells)
    if final == shape.goal:
        return MoveCheck(
            True, True, None, f"{_count(len(moves), 'move')} reach{'es' if len(moves) == 1 else ''} the goal", final
        )
    wrong = sum(1 for a, b in zip(final, shape.goal) if a != b and a != BLANK)
    return MoveCheck(
        False,
        True,
        None,
        f"{_count(len(moves), 'legal move')} end{'s' if len(moves) == 1 else ''} short of the goal: "
        f"blank on cell {blank}, {_count(wrong, 'tile')} off {'its' if wrong == 1 else 'their'} "
        f"home cell{'' if wrong == 1 else 's'}",
        final,
    )


def _count(n: int, noun: str) -> str:
    """``1 move``, ``2 moves``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"
