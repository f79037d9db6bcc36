"""What happened to one board (:class:`Outcome`, the ``--json`` record and its exit code;
:class:`Result`, its public view, ``solve()``'s answer) and what two answers for the same
board say together: the better of them (:func:`better`), a contradiction between them, the
certificate of a proof.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
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
    """What happened to one board: the one record of it, from the search's result to
    the journal, the report and ``--json`` (:meth:`as_json` / :meth:`from_json`, the
    only places its fields meet their JSON keys); :class:`Result` is its
    public view.  A field is None where it does not apply (a check has no nodes, a
    board not yet answered no moves).  Its parts:

    * **what was checked** (``check``): ``solvable``, ``method`` (how solvability was
      decided), ``reaches_goal`` and ``move_index`` (the first illegal move);
    * **the board**: ``size`` ("WxH"), ``walls``, ``goal``;
    * **the answer**: ``moves``, ``length``, ``optimal``, ``fallback`` (how an
      unproven answer was found), ``ladder_failed`` (the fallback's beams that ended
      without one: [table bytes a pattern, widths]);
    * **the proof**: ``lower_bound`` (every IDA* iteration below it completed without
      a solution), ``h0`` (the initial estimate), ``floor`` (where the first iteration
      began, from an earlier attempt), ``proof`` and ``certificate`` (why optimal),
      ``expected_length`` (a benchmark line's stated length), ``contradiction``;
    * **the cost**: ``nodes``, ``seconds``, ``threads`` (the most that searched it at
      once, when more than one), ``cpu_share``, ``iterations`` and ``unfinished``
      (:func:`search_cost`);
    * **the tables**: ``heuristic`` (their names), ``tables`` (file -> checksums),
      ``tables_left_out``, ``version`` (of slidepdb);
    * **the run's bookkeeping**: ``time_limit`` (the largest the board has had; None:
      none; 0: not recorded), ``ended`` (wall clock), ``left_out`` (kept out of the
      answer file by the move limits), ``reopened`` (why a journalled proof was
      withdrawn).

    ``more``: keys of a journal line that this version does not know, kept as read."""

    index: int
    board: str
    status: str
    error: str | None = None
    # what was checked
    solvable: bool | None = None
    method: str | None = None
    # the board
    size: str | None = None
    walls: int | None = None
    goal: str | None = None
    # the proof, the cost and the tables, in the order a search reports them
    h0: int | None = None
    nodes: int | None = None
    seconds: float | None = None
    lower_bound: int | None = None
    heuristic: list | None = None
    tables: dict | None = None
    tables_left_out: dict | None = None
    version: str | None = None
    fallback: str | None = None
    ladder_failed: list | None = None
    threads: int | None = None
    iterations: list | None = None
    unfinished: list | None = None
    floor: int | None = None
    expected_length: int | None = None
    # the answer
    moves: str | None = None
    length: int | None = None
    optimal: bool | None = None
    reaches_goal: bool | None = None
    move_index: int | None = None
    proof: str | None = None
    certificate: dict | None = None
    contradiction: str | None = None
    # the run's bookkeeping
    cpu_share: float | None = None
    time_limit: float | None = 0
    ended: float | None = None
    left_out: bool | None = None
    reopened: str | None = None
    more: dict = field(default_factory=dict)

    @classmethod
    def of_board(cls, index: int, board: str, status: str, error: str | None, shape, **fields) -> Outcome:
        """A record of a board of ``shape``: its size, walls and goal filled in."""
        return cls(
            index, board, status, error, size=shape.size_text, walls=len(shape.walls), goal=shape.goal_kind, **fields
        )

    @property
    def exit_code(self) -> int:
        return exit_code(self.status, self.contradiction)

    @property
    def solved(self) -> bool:
        """Whether it holds an answer (simulated to the goal)."""
        return self.status == "solved"

    @property
    def proven(self) -> bool:
        return bool(self.optimal)

    @property
    def gap(self) -> int | None:
        """How many moves the answer may be over the optimum (0: proven; None: no answer)."""
        if self.length is None:
            return None
        return 0 if self.optimal else self.length - (self.lower_bound or 0)

    def withdraw_proof(self, **why) -> None:
        """Withdraw the optimal claim and the lower bound (the answer stays)."""
        self.optimal, self.lower_bound, self.certificate, self.proof = False, None, None, None
        for name, value in why.items():
            setattr(self, name, value)

    def as_json(self) -> dict:
        """The ``--json`` / journal / report record: the fields that apply (not None,
        and ``time_limit`` where recorded), with ``moves``, ``length``, ``optimal`` and
        ``lower_bound`` always in a search's record."""
        out = {"index": self.index, "board": self.board, "status": self.status, "error": self.error}
        searched = self.status in SEARCH_STATUSES
        for f in _RECORD_FIELDS:
            value = getattr(self, f.name)
            if value != f.default or (searched and f.name in ALWAYS_IN_SEARCH):
                out[f.name] = value
        out.update(self.more)
        return out

    @classmethod
    def from_json(cls, d: dict) -> Outcome:
        """The record :meth:`as_json` wrote, by this version or an earlier one."""
        known = {k: v for k, v in d.items() if k in _FIELD_NAMES}
        more = {k: v for k, v in d.items() if k not in _FIELD_NAMES}
        return cls(**known, more=more)


SEARCH_STATUSES = ("solved", "limit", "error")
ALWAYS_IN_SEARCH = ("moves", "length", "optimal", "lower_bound")
_RECORD_FIELDS = [f for f in fields(Outcome) if f.name not in ("index", "board", "status", "error", "more")]
_FIELD_NAMES = {f.name for f in fields(Outcome)} - {"more"}


def internal_error(index: int, board, exc: Exception) -> Outcome:
    """What a board whose search raised ``exc`` reports (a bug; the batch goes on)."""
    what = f"internal error: {type(exc).__name__}: {exc}"
    return Outcome.of_board(index, str(board), "error", what, board.shape, optimal=False)


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
        if o is None or o.lower_bound is None:
            return None
        return cls(int(o.lower_bound), o.length if o.solved else None)


KEPT_ITERATIONS = 3


def search_cost(result) -> tuple[list | None, list | None]:
    """What an unproven search's iterations cost, for the record: the last
    :data:`KEPT_ITERATIONS` it completed (``iterations``: [threshold, nodes, seconds]
    each, None: none) and the one a limit stopped (``unfinished``, None: none), from
    which :mod:`solver.run.forecast` tells what proving the board would take."""
    iterations = [list(it) for it in result.iterations[-KEPT_ITERATIONS:]] or None
    return iterations, None if result.unfinished is None else list(result.unfinished)


def _cost_source(old: Outcome, new: Outcome) -> Outcome:
    """Of two attempts at a board, the one whose iterations tell the next attempt's
    cost: the one that reached the higher lower bound, then the one that searched
    more of the iteration at it."""

    def key(o: Outcome):
        unfinished = o.unfinished or (0, 0, 0)
        return (o.lower_bound or 0, unfinished[1], bool(o.iterations), o is new)

    return max((old, new), key=key)


def certificate(o: Outcome, checksums: dict, how: str) -> dict:
    """Why ``o``'s answer is optimal, for the record: the threshold of the IDA*
    iteration that completed (``how="search"``: the iteration at the answer's length
    found it after every lower one completed without a solution; ``"bound"``: an
    iteration at the answer's length was reached, so every lower one completed), the
    answer's length, and the tables the estimate read (file name -> each table's
    sha256, 16 hex digits; none: wall-aware Manhattan distance and linear conflicts
    only).  ``floor``, when the search began above its initial estimate: the lower
    bound an earlier attempt at the board proved, where its first iteration began."""
    out = {"threshold": o.lower_bound, "length": o.length, "how": how, "tables": checksums}
    if o.floor is not None:
        out["floor"] = o.floor
    return out


def settle_by_bound(o: Outcome) -> None:
    """Flag an answer optimal when it is as long as the lower bound and that bound is
    past the initial estimate: it is then the threshold of an IDA* iteration on an
    admissible estimate, reached only after every iteration below it completed without
    a solution, so nothing shorter exists.  (A fallback answer often meets it: the
    optimal search ran out of time in the last iteration.)  ``proof`` records it."""
    length, bound = o.length, o.lower_bound
    h0 = bound if o.h0 is None else o.h0
    if not o.optimal and length is not None and length == bound and bound > h0:
        o.optimal = True
        o.proof = "length equals the lower bound"


def stated_length_clash(o: Outcome) -> str | None:
    """Where a benchmark line's stated optimal length (``expected_length``) disagrees
    with what was proven or found, the contradiction (also set as ``o.contradiction``:
    the outcome's exit code is then 1); None when nothing disagrees.  An answer
    shorter than the stated length was simulated, so the line is wrong and the
    search's claims stand; a proof of another length, or a lower bound above the
    stated length, disagrees with the line without telling which is wrong: the
    optimal claim and the lower bound are withdrawn (the answer stays)."""
    stated, length, bound = o.expected_length, o.length, o.lower_bound
    if stated is None:
        return None
    if length is not None and length < stated:
        what = f"an answer of {plural(length, 'move')} reaches the goal (simulated): the stated length is wrong"
    elif o.optimal and length != stated:
        what = f"{length} is proven optimal; that proof is withdrawn"
    elif bound is not None and bound > stated:
        what = f"the proven lower bound is {bound}; that bound is withdrawn"
    else:
        return None
    if not (length is not None and length < stated):
        o.withdraw_proof()
    tables = "; ".join(o.heuristic or []) or "Manhattan distance"
    stated_text = f"the line states an optimal length of {stated}"
    o.contradiction = f"contradiction on board {o.board}: {stated_text}, but {what} (tables: {tables})"
    return o.contradiction


def rank(o: Outcome) -> tuple:
    """How much an outcome found, for comparison: answered, proven, then shorter."""
    return (o.solved, o.proven, -(o.length if o.length is not None else 1 << 30))


def better(old: Outcome, new: Outcome) -> Outcome:
    """Of two outcomes for one board: proven beats unproven beats none, then the
    shorter answer; the higher of their lower bounds is kept either way.

    Both answers were simulated, so one shorter than the other's proven length or
    lower bound is a contradiction (a table or a search is wrong): the shorter one is
    kept, nothing is called optimal, and ``contradiction`` says what met (the
    outcome's exit code is then 1)."""
    clash = contradiction(old, _answer_length(new)) or contradiction(new, _answer_length(old))
    if clash:
        keep = min((o for o in (old, new) if o.length is not None), key=lambda o: o.length)
        keep.optimal, keep.contradiction, keep.proof = False, clash, None
        keep.lower_bound = max(
            [b for b in (o.lower_bound for o in (old, new)) if b is not None and b <= keep.length] or [0]
        )
        return keep
    keep = new if rank(new) >= rank(old) else old
    source = _cost_source(old, new)  # the cost goes with the lower bound kept
    keep.iterations, keep.unfinished = source.iterations, source.unfinished
    bounds = [o.lower_bound for o in (old, new) if o.lower_bound is not None]
    if bounds:
        keep.lower_bound = max(bounds)
        settle_by_bound(keep)
        if keep.optimal and keep.certificate is None:  # proven by the other's bound
            keep.certificate = certificate(keep, {**(old.tables or {}), **(new.tables or {})}, how="bound")
    return keep


def _answer_length(o: Outcome) -> int | None:
    return o.length if o.solved else None


def contradiction(claim: Outcome, length: int | None) -> str | None:
    """What is wrong when a valid (simulated) answer of ``length`` moves is shorter
    than ``claim``'s proven length or lower bound, else None."""
    if length is None:
        return None
    proven = claim.length if claim.solved and claim.optimal else None
    bound = claim.lower_bound
    if proven is not None and length < proven:
        what = f"an answer of {length} moves is shorter than the {proven} called optimal"
    elif bound is not None and length < bound:
        what = f"an answer of {length} moves is shorter than the proven lower bound {bound}"
    else:
        return None
    tables = "; ".join(claim.heuristic or []) or "Manhattan distance"
    return f"contradiction on board {claim.board}: {what} (that claim's tables: {tables}); its optimal claim withdrawn"


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
    contradiction: str | None = None  # a benchmark line's stated length that disagrees with the search

    @property
    def exit_code(self) -> int:
        """The code ``slidepdb solve`` exits with for this board."""
        return exit_code(self.status, self.contradiction)

    @classmethod
    def of(cls, o: Outcome) -> Result:
        """The public view of a board's record."""
        return cls(
            board=o.board,
            status=o.status,
            moves=o.moves,
            length=o.length,
            optimal=o.proven,
            lower_bound=o.lower_bound,
            nodes=int(o.nodes or 0),
            seconds=float(o.seconds or 0.0),
            heuristic=list(o.heuristic or []),
            fallback=o.fallback,
            error=o.error,
            certificate=o.certificate,
            tables=dict(o.tables or {}),
            contradiction=o.contradiction,
        )
