"""What happened to one board (:class:`Outcome`, the ``--json`` record and its exit code)
and what two answers for the same board say together: the better of them
(:func:`better`), a contradiction between them, the certificate of a proof.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from pdb_builder.errors import (
    EXIT_BAD_INPUT,
    EXIT_BAD_MOVES,
    EXIT_INTERNAL,
    EXIT_LIMIT,
    EXIT_OK,
    EXIT_UNSOLVABLE,
)
from pdb_builder.words import plural

STATUS_EXIT = {
    "valid": EXIT_OK,
    "solved": EXIT_OK,
    "invalid": EXIT_BAD_INPUT,
    "unsolvable": EXIT_UNSOLVABLE,
    "limit": EXIT_LIMIT,
    "illegal": EXIT_BAD_MOVES,
    "error": EXIT_INTERNAL,
}


def exit_code(status: str, contradiction: str | None = None) -> int:
    """A board's exit code: its status's, and at least 1 where a contradiction stands."""
    code = STATUS_EXIT[status]
    return max(code, EXIT_INTERNAL) if contradiction else code


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
        return exit_code(self.status, self.extra.get("contradiction"))

    def as_json(self) -> dict:
        out = {"index": self.index, "board": self.board, "status": self.status, "error": self.error}
        out.update(self.extra)
        return out


def internal_error(index: int, board, exc: Exception) -> Outcome:
    """What a board whose search raised ``exc`` reports (a bug; the batch goes on)."""
    shape = board.shape
    extra = {"size": shape.size_text, "walls": len(shape.walls), "goal": shape.goal_kind}
    extra.update(moves=None, length=None, optimal=False)
    return Outcome(index, str(board), "error", f"internal error: {type(exc).__name__}: {exc}", extra)


class Known(NamedTuple):
    """What earlier attempts at a board proved and found: the lower bound (every IDA*
    iteration below it ended without a solution) and the length of the best answer
    (None: none yet).  A later search starts at the one and stops at the other
    (:func:`solver.api.solve_record`).  ``ring``: an earlier fallback found no answer on
    a walled board that no table served (most often a ring of walls, which misleads its
    first beam): the next goes straight to tables of the board's layout, passing over
    the beams that failed on them before; (table bytes a pattern, their widths), None
    where not a ring (:class:`solver.fallback.ladder.Fallback`)."""

    lower_bound: int
    answer: int | None = None
    ring: tuple | None = None

    @classmethod
    def of(cls, o: Outcome | None) -> Known | None:
        """What ``o`` knows, or None when it proved nothing (no lower bound)."""
        bound = None if o is None else o.extra.get("lower_bound")
        if bound is None:
            return None
        return cls(int(bound), o.extra.get("length") if o.status == "solved" else None)


COST_KEYS = ("iterations", "unfinished")
KEPT_ITERATIONS = 3


def search_cost(result) -> dict:
    """What an unproven search's iterations cost, for the record (``extra``): the last
    :data:`KEPT_ITERATIONS` it completed (``iterations``: [threshold, nodes, seconds]
    each) and the one a limit stopped (``unfinished``, when there was one), from
    which :mod:`solver.run.forecast` tells what proving the board would take."""
    out = {}
    if result.iterations:
        out["iterations"] = [list(it) for it in result.iterations[-KEPT_ITERATIONS:]]
    if result.unfinished is not None:
        out["unfinished"] = list(result.unfinished)
    return out


def _cost_source(old: Outcome, new: Outcome) -> Outcome:
    """Of two attempts at a board, the one whose iterations tell the next attempt's
    cost: the one that reached the higher lower bound, then the one that searched
    more of the iteration at it."""

    def key(o: Outcome):
        unfinished = o.extra.get("unfinished") or (0, 0, 0)
        return (o.extra.get("lower_bound") or 0, unfinished[1], bool(o.extra.get("iterations")), o is new)

    return max((old, new), key=key)


def certificate(extra: dict, checksums: dict, how: str) -> dict:
    """Why an answer is optimal, for the record: the threshold of the IDA* iteration
    that completed (``how="search"``: the iteration at the answer's length found it
    after every lower one completed without a solution; ``"bound"``: an iteration at
    the answer's length was reached, so every lower one completed), the answer's
    length, and the tables the estimate read (file name -> each table's sha256, 16
    hex digits; none: wall-aware Manhattan distance and linear conflicts only).
    ``floor``, when the search began above its initial estimate: the lower bound an
    earlier attempt at the board proved, where its first iteration began."""
    out = {"threshold": extra["lower_bound"], "length": extra["length"], "how": how, "tables": checksums}
    if extra.get("floor") is not None:
        out["floor"] = extra["floor"]
    return out


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


def stated_length_clash(extra: dict, board: str) -> str | None:
    """Where a benchmark line's stated optimal length (``expected_length``) disagrees
    with what was proven or found, the contradiction (also set as
    ``extra["contradiction"]``: the outcome's exit code is then 1); None when nothing
    disagrees.  An answer shorter than the stated length was simulated, so the line is
    wrong and the search's claims stand; a proof of another length, or a lower bound
    above the stated length, disagrees with the line without telling which is wrong:
    the optimal claim and the lower bound are withdrawn (the answer stays)."""
    stated = extra.get("expected_length")
    length, bound = extra.get("length"), extra.get("lower_bound")
    if stated is None:
        return None
    if length is not None and length < stated:
        what = f"an answer of {plural(length, 'move')} reaches the goal (simulated): the stated length is wrong"
    elif extra.get("optimal") and length != stated:
        what = f"{length} is proven optimal; that proof is withdrawn"
    elif bound is not None and bound > stated:
        what = f"the proven lower bound is {bound}; that bound is withdrawn"
    else:
        return None
    if not (length is not None and length < stated):
        extra.update(optimal=False, lower_bound=None)
        for key in ("certificate", "proof"):
            extra.pop(key, None)
    tables = "; ".join(extra.get("heuristic") or []) or "Manhattan distance"
    clash = (
        f"contradiction on board {board}: the line states an optimal length of {stated}, but {what} (tables: {tables})"
    )
    extra["contradiction"] = clash
    return clash


def rank(o: Outcome) -> tuple:
    """How much an outcome found, for comparison: answered, proven, then shorter."""
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
    keep = new if rank(new) >= rank(old) else old
    source = _cost_source(old, new)
    for k in COST_KEYS:  # the cost goes with the lower bound kept
        if k in source.extra:
            keep.extra[k] = source.extra[k]
        else:
            keep.extra.pop(k, None)
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
