"""Answer files: the DevQuiz move limits, and comparison with other answer files.

A DevQuiz problem file starts with the total number of L, R, U and D moves
allowed over all answers.  :func:`fit_limits` decides which answers an answer
file may hold under those limits (all of them when they fit; otherwise it leaves
out as few as it can, longest over the limits and unproven ones first), so no answer
file is ever written over the limits.  :func:`compare` sets our answers against
another answer file (e.g. a contestant's published one), simulating every line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pdb_builder.errors import BoardError
from pdb_builder.moves import check_moves
from pdb_builder.words import plural

DIRECTIONS = "LRUD"


def direction_counts(moves: str) -> tuple[int, int, int, int]:
    return tuple(moves.count(d) for d in DIRECTIONS)


def totals(answers) -> list[int]:
    """Total L, R, U, D over an iterable of move strings."""
    out = [0, 0, 0, 0]
    for m in answers:
        for i, c in enumerate(direction_counts(m or "")):
            out[i] += c
    return out


def excess_over(use, limits) -> dict[int, int]:
    """Each direction (0-3: L R U D) whose moves ``use`` takes past ``limits``, and by how many."""
    return {k: use[k] - int(limits[k]) for k in range(4) if use[k] > int(limits[k])}


def fit_limits(answers: dict[int, str], limits, optimal: dict[int, bool] | None = None) -> set[int]:
    """Indices of the answers to leave out so the rest fit ``limits`` (L, R, U, D).

    Greedy: while some direction is over, drop the answer that takes away the most
    of the excess (so few answers go), on a tie one not proven optimal, then the
    longer one.  Empty when everything fits or there are no limits."""
    if limits is None:
        return set()
    optimal = optimal or {}
    use = totals(answers.values())
    dropped: set[int] = set()
    counts = {i: direction_counts(m) for i, m in answers.items() if m}
    while True:
        excess = excess_over(use, limits)
        if not excess:
            return dropped
        best = max(
            (i for i in counts if i not in dropped),
            key=lambda i: (
                sum(min(counts[i][k], e) for k, e in excess.items()),
                not optimal.get(i, False),
                sum(counts[i]),
                -i,
            ),
        )
        dropped.add(best)
        for k in range(4):
            use[k] -= counts[best][k]


def move_rows(answers, limits) -> list[tuple]:
    """Per direction: moves used, the limit, what is left."""
    use = totals(answers)
    rows = []
    for k, d in enumerate(DIRECTIONS):
        lim = limits[k] if limits is not None else None
        rows.append((d, f"{use[k]:,}", "-" if lim is None else f"{lim:,}", "-" if lim is None else f"{lim - use[k]:,}"))
    lim_all = sum(limits) if limits is not None else None
    rows.append(
        (
            "all",
            f"{sum(use):,}",
            "-" if lim_all is None else f"{lim_all:,}",
            "-" if lim_all is None else f"{lim_all - sum(use):,}",
        )
    )
    return rows


MOVE_HEADERS = ["move", "used", "limit", "left"]


@dataclass
class Comparison:
    """Our answers against one other answer file, board by board."""

    name: str
    theirs_answered: int = 0
    theirs_invalid: int = 0
    theirs_moves: int = 0
    ours_answered: int = 0
    ours_moves: int = 0
    shorter: int = 0  # boards both answered where ours is shorter
    equal: int = 0
    longer: int = 0
    only_ours: int = 0
    only_theirs: int = 0
    problems: list[str] = field(default_factory=list)
    contradictions: list[str] = field(default_factory=list)  # their valid answer shorter than our proof


def read_answer_file(path, records, whole: bool = False) -> list[str | None]:
    """One answer per record (None for an empty line, or a missing one unless
    ``whole``: then a file of fewer lines than records is an error naming how many are
    missing; more lines than records always are)."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise BoardError(f"{path}: cannot read: {exc}") from None
    for i, line in enumerate(lines, 1):
        if "\x00" in line:
            raise BoardError(f"{path}:{i}: not a text file of answers (a NUL byte)")
    if len(lines) > len(records):
        raise BoardError(f"{path}: {plural(len(lines), 'answer line')} for {plural(len(records), 'board')}")
    if whole and len(lines) < len(records):
        missing = len(records) - len(lines)
        raise BoardError(
            f"{path}: {plural(len(lines), 'answer line')} for {plural(len(records), 'board')}: "
            f"{plural(missing, 'line')} missing (a board left unanswered is an empty line)"
        )
    return [(lines[i].strip() or None) if i < len(lines) else None for i in range(len(records))]


def compare(path, records, ours: dict[int, str], outcomes=None) -> Comparison:
    """Simulate every line of answer file ``path`` on ``records`` (in order) and set it
    against ``ours`` (record index -> moves).  With ``outcomes`` (record index ->
    Outcome), a valid answer of theirs shorter than a length we proved optimal, or than
    our proven lower bound, is a contradiction, listed in ``contradictions``."""
    from ..outcome import contradiction

    c = Comparison(Path(path).name)
    for line, (rec, theirs) in enumerate(zip(records, read_answer_file(path, records)), 1):
        mc = None if rec.board is None or theirs is None else check_moves(rec.board, theirs)
        if mc is not None and not mc.ok:
            c.theirs_invalid += 1
            c.problems.append(f"{c.name}:{line}: {mc.reason} (board {rec.board})")
            theirs = None
        mine = ours.get(rec.index)
        ours_outcome = (outcomes or {}).get(rec.index)
        if theirs is not None and ours_outcome is not None:
            clash = contradiction(ours_outcome, len(theirs))
            if clash:
                c.contradictions.append(f"{c.name}:{line}: {clash}")
        if theirs is not None:
            c.theirs_answered += 1
            c.theirs_moves += len(theirs)
        if mine is not None:
            c.ours_answered += 1
            c.ours_moves += len(mine)
        if mine is not None and theirs is not None:
            if len(mine) < len(theirs):
                c.shorter += 1
            elif len(mine) == len(theirs):
                c.equal += 1
            else:
                c.longer += 1
        elif mine is not None:
            c.only_ours += 1
        elif theirs is not None:
            c.only_theirs += 1
    return c


def comparison_rows(comps) -> list[tuple]:
    return [
        (
            c.name,
            f"{c.theirs_answered:,}",
            f"{c.theirs_moves:,}",
            f"{c.ours_answered:,}",
            f"{c.ours_moves:,}",
            c.shorter,
            c.equal,
            c.longer,
            c.only_ours,
            c.only_theirs,
        )
        for c in comps
    ]


COMPARISON_HEADERS = [
    "answer file",
    "their answers",
    "their moves",
    "our answers",
    "our moves",
    "ours shorter",
    "same length",
    "ours longer",
    "only ours",
    "only theirs",
]
