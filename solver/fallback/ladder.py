"""A valid answer when a limit stops the optimal search: the fallback policy.

A board's fallback has :data:`FALLBACK_TIMES` times the board's limits (seconds and
nodes) on top of the optimal search's, so a board takes at most
``(1 + FALLBACK_TIMES)`` times its limits in all, plus start-up and one slice of
work (see :mod:`solver.search.limits`).  Within it, in turn:

1. a beam of the first width of the tuning's ``beam_widths`` (:mod:`solver.tuning`; fast, rarely fails), unless a
   node limit could not pay for :data:`BEAM_MIN_LEVELS` levels of it;
2. when that beam failed on a board with walls that no table serves (a walled ring
   misleads Manhattan distance, which counts no tile in another's way): small tables
   of the exact layout built in memory (:func:`layout_searcher`, patterns of about
   four tiles, under a second on the DevQuiz sizes, or of about three, at most
   :data:`LAYOUT_SMALL` a pattern, with less than ``layout_seconds`` left; the
   optimal search's when it built them, see :func:`solver.api.optimal_search`), for
   the board reversed (from the goal to the start, answer inverted) and for the
   board, then beams on them (:class:`Ladder`): each width of :data:`LADDER_WIDTHS` in
   turn, the backward beam of the first width alone (where it answers, the board's
   own tables are never built: it answered 23 of 27 DevQuiz ring boards, the forward
   one 16), then forward and backward beams taking turns by the time each has taken
   (by levels under a node limit alone; a beam that fails on a ring can succeed at
   another width or in the other direction, and which one cannot be told in
   advance), the pair with at most :data:`LADDER_SHARE` of what is left, each beam
   stopping at the depth of :data:`LADDER_DEPTH`; one staged search (step 6,
   :data:`LADDER_STAGED_SHARE` of what is left) after the first :data:`LADDER_STAGED`
   widths; until one answers.  The steps below then use the board's layout tables
   where they were built;
3. on a walled board whose own database tables served step 1 and misled it (a ring of
   walls can mislead every search on them), step 2's beams and staged search on those
   tables, with :data:`OWN_LADDER_SHARE` of all that is left: before weighted IDA*, which
   rarely answers such a board (3 of the 8 walled boards of ``hard.txt`` whose first
   beam failed, against 8 of 8 for these beams, most of them backwards);
4. weighted IDA*, the weights of ``fallback_weights`` in turn, each with half of
   what is left of its share (:data:`WEIGHTED_SHARE` of the search time left; only
   1.5 and 2 once a beam has answered: larger weights rarely beat it), until one answers;
5. wider beams while the next is expected to fit (each takes about four times the last),
   unless step 2 or 3 ran;
6. staged search (:func:`solver.fallback.staged.staged_search`: tile groups placed in turn,
   bounded memory) with what is left of the search phase when the best is over
   :data:`STAGED_RATIO` times the lower bound (a beam can wander for hundreds of
   moves), or with all that is left when nothing answered (nothing to polish);
7. :func:`solver.polish.polish` (windows of the path solved optimally) with what is
   left of the whole fallback share, at least ``FALLBACK_TIMES - SEARCH_TIMES`` limits.
"""

from __future__ import annotations

import time
from typing import NamedTuple

from pdb_builder.api import layout_tables
from pdb_builder.board import Board, Shape
from pdb_builder.errors import BoardError
from pdb_builder.lookup import lookups_for

from ..search.heuristic import Heuristic, manhattan_tables
from ..search.limits import Limits, scaled
from ..search.searcher import Searcher
from ..tuning import tuning
from .beam import Beam, beam_search
from .polish import polish
from .staged import reversed_board, staged_search, undo

FALLBACK_TIMES = 2.0  # the fallback's limits, as a multiple of the board's
SEARCH_TIMES = 1.75  # of which the searches (1-6) take at most this; polishing the rest
WEIGHTED_SHARE = 0.5  # weighted IDA* takes at most this part of the search time left after the first beam
BEAM_MIN_LEVELS = 16  # a node limit too small for this many levels of the first beam goes to weighted IDA*
POLISH_SECONDS = 10.0  # polishing time of a fallback answer when only a node limit is given
STAGED_RATIO = 2  # staged search is tried too when the best answer is this many times the lower bound
LAYOUT_MEMORY = 10 << 20  # per pattern BFS of the tables step 2 builds in memory
LAYOUT_ZERO_AWARE = True  # and their costs by region of the blank (pdb_builder/regions.py)
LAYOUT_SMALL = 3 << 20  # ... and of this with less (0.15-0.6 s on DevQuiz's walled 6x6 boards, against
# 0.2-1.6 s; the beams on them answer nearly as often: 23 of 28 ring boards each at a limit of 0.8 s,
# and a 32768 beam all 28 on the small ones, but a 4096 one there fewer)
LAYOUT_LEAST = 0.2  # step 2 is skipped with less search time than this left
LADDER_WIDTHS = (1024, 4096, 32768, 65536)  # step 2's beams, each forwards and backwards
# (on 28 DevQuiz ring boards and 3 MB tables, a 32768 beam answered all 28 in one direction or the
# other, 65536 too at twice the time, 16384 all but one: the cost to the first answer added to 18.6 s
# over the 28 boards, at most 6.7 s on one, against 28.7 s and 11.1 s for 1024, 4096, 65536, 16384)
LADDER_SHARE = 0.8  # one width of step 2 (both directions) takes at most this part of the search time left
LADDER_STAGED = 3  # step 2 tries staged search after this many widths (it is quick where it works)
LADDER_STAGED_SHARE = 0.6  # ... with at most this part of what is left (where the first widths failed, the
# staged search answers more often than the last width: 5 of the 9 hardest DevQuiz ring boards, in 0.03-5.4 s)
SHORTER_WEIGHTS = ((150, 0.6), (200, 1.0))  # (percent, part of what is left of the search share), in turn
LADDER_DEPTH = (3, 60)  # step 2's beams stop at 3 x the lower bound + 60 moves (a beam that wanders has failed)
OWN_LADDER_SHARE = 0.85  # step 3 (step 2 on a board's own tables) takes at most this part of what is left


def layout_searcher(
    shape: Shape, limits: Limits, use_lc: bool = False, memory: int = LAYOUT_MEMORY, zero_aware: bool | None = None
) -> Searcher | None:
    """A searcher on wall-aware Manhattan (with linear conflicts if ``use_lc``) plus
    additive tables of ``shape``'s exact layout
    (:func:`pdb_builder.api.layout_tables` within ``memory`` bytes a pattern),
    built in memory; None when no partition fits or ``limits`` runs out
    between patterns.  The placements the BFS valued are spent from ``limits``.  The
    BFS keeps to the calling thread: the tables are small, and a batch worker forked
    from a process that ran parallel kernels (``slidepdb run`` builds before it
    solves) must not start threads of its own."""
    try:
        part, tables = layout_tables(shape, memory, LAYOUT_ZERO_AWARE if zero_aware is None else zero_aware)
    except BoardError:
        return None
    built = []
    if limits.out():
        return None
    for group, table, entries, zero in tables:  # each pattern built as the loop asks for it
        limits.spend(entries)
        built.append((group, table, None, None, None, zero))
        if limits.out() and len(built) < len(part.groups):
            return None
    h = Heuristic(
        shape,
        *manhattan_tables(shape),
        use_lc=use_lc,
        lookups=lookups_for(shape, shape, built, 0, reflect=False),
        names=[f"layout {part.name} (in memory)"],
    )
    return Searcher(h)


class Ladder:
    """Step 2's beams for ``board``: on ``forward`` (the board's tables: a searcher, or
    a callable that builds them when first needed, None when it cannot) and on tables
    of ``memory`` bytes a pattern built for the board reversed, each beam stopping at
    :data:`LADDER_DEPTH` of ``lower_bound``.  ``built``: the forward searcher once there."""

    def __init__(self, board: Board, lower_bound: int, forward, memory: int = LAYOUT_MEMORY, failed=()):
        self.board, self.memory = board, memory
        self.failed = set(failed)  # widths whose beams both ended without an answer (on these tables)
        self.depth = LADDER_DEPTH[0] * lower_bound + LADDER_DEPTH[1]
        self.make = forward if callable(forward) else None
        self.built: Searcher | None = None if callable(forward) else forward
        self.back_board: Board | None = None
        self.back: Searcher | None = None

    def forward(self) -> Searcher | None:
        """The board's tables, built at the first call where they were not given."""
        if self.make is not None:
            self.built, self.make = self.make(), None
        return self.built

    def beams(self, search: Limits, widths) -> tuple[str | None, str | None]:
        """The beams of ``widths`` in turn: (moves, how) of the first that answers, or
        (None, None).  A width's two directions take turns by the time each has taken,
        not by levels (the board's own tables are large, so a level costs more forwards
        than backwards on the small tables built for the reversed board; under a node
        limit alone, by levels, so that the answer does not depend on the machine's
        load), :data:`LADDER_SHARE` of what is left for the pair.  While the forward
        tables are not built, the backward beam of a width goes alone first.  A width in
        :attr:`failed` is passed over (a beam is the same search each time on the same
        tables); one whose beams both end without an answer inside their share is added."""
        if self.back_board is None and not search.out():
            self.back_board = reversed_board(self.board)
            self.back = layout_searcher(self.back_board.shape, search, memory=self.memory)
        for width in widths:
            if search.out():
                break
            if width in self.failed:
                continue
            pair = _share(search, LADDER_SHARE)
            beams = []  # [seconds taken, beam, how]
            if self.back is not None:
                beams.append([0.0, Beam(self.back, self.back_board, width, self.depth), " backwards"])
            if self.make is not None and beams:  # the backward beam alone: most often it answers
                found = _take_turns(beams, pair)
                if found:
                    return found
            forward = None if pair.out() else self.forward()
            if forward is not None:
                beams.append([0.0, Beam(forward, self.board, width, self.depth), ""])
            found = _take_turns(beams, pair)
            if found:
                return found
            if not pair.out() and self.back is not None and forward is not None:
                self.failed.add(width)
        return None, None


def _take_turns(beams: list, pair: Limits) -> tuple[str, str] | None:
    """``beams`` ([seconds taken, beam, how], each of one width) advanced in turn, the
    one that has taken the least time first, within ``pair``: (moves, how) of the first
    that answers, or None when all ended without one (``beams`` emptied)."""
    timed = pair.seconds_left() is not None  # a node limit alone: turns by levels, one answer on any load
    while beams:
        turn = min(beams, key=lambda b: b[0])
        t = time.perf_counter()
        ended = turn[1].advance(pair)
        turn[0] += time.perf_counter() - t if timed else 1.0
        if ended:
            beam, how = turn[1], turn[2]
            if beam.moves is not None:
                return (undo(beam.moves) if how else beam.moves), f"beam width {beam.width}{how} on layout tables"
            beams.remove(turn)
    return None


def _share(limits: Limits, share: float) -> Limits:
    """``share`` of what is left of ``limits`` (time and nodes), inside it."""
    return limits.within(scaled(limits.seconds_left(), share), scaled(limits.nodes(), share))


class Fallback(NamedTuple):
    """What :func:`fallback_search` found: the moves (None: no answer), how they were
    found, the nodes of every search, and ``failed``: (table bytes a pattern, widths)
    of step 2's beams that ended without an answer, for the board's next try."""

    moves: str | None
    how: str | None
    nodes: int
    failed: tuple | None = None


def fallback_search(
    searcher: Searcher,
    board: Board,
    time_limit: float | None,
    node_limit: int | None,
    lower_bound: int = 0,
    layout: Searcher | None = None,
    first_beam: bool = True,
    failed: tuple | None = None,
) -> Fallback:
    """The shortest valid answer the steps of the module docstring find within
    :data:`FALLBACK_TIMES` times ``time_limit`` and ``node_limit`` (at least one of
    them given).  ``layout``: step 2's tables when the optimal search already built
    them (:func:`solver.api.optimal_search`).  ``first_beam`` False: step 1 only where
    step 2 does not run (a board whose first beam failed before: every second to its
    layout's tables).  ``failed``: (table bytes a pattern, widths) of step 2's beams that
    ended without an answer before (:attr:`Fallback.failed`): passed over on tables of
    that size."""
    if time_limit is None and node_limit is None:
        raise ValueError("the fallback needs a time or node limit to share out")
    total = Limits(scaled(time_limit, FALLBACK_TIMES), scaled(node_limit, FALLBACK_TIMES))
    search = total.within(scaled(time_limit, SEARCH_TIMES), scaled(node_limit, SEARCH_TIMES))
    best, label = None, None

    def keep(moves, how):
        nonlocal best, label
        if moves is not None and (best is None or len(moves) < len(best)):
            best, label = moves, how

    def beam(width):
        t = time.perf_counter()
        keep(beam_search(searcher, board, width=width, limits=search), f"beam width {width}{tag}")
        return time.perf_counter() - t

    def ladder(rungs: Ladder, limits: Limits) -> None:
        """Step 2's beams and staged search on ``rungs`` within ``limits``."""
        keep(*rungs.beams(limits, LADDER_WIDTHS[:LADDER_STAGED]))
        if best is None and not limits.out():
            keep(staged_search(board, limits=_share(limits, LADDER_STAGED_SHARE)), "staged")
        if best is None:
            keep(*rungs.beams(limits, LADDER_WIDTHS[LADDER_STAGED:]))

    tag = ""
    tried = failed  # what step 2's beams found of no use: kept for the next try
    ringed = False  # step 2 or 3 ran
    last = 0.0  # what a beam took, to judge whether the next, wider one fits
    t = tuning()
    widths = t.beam_widths
    first_fits = bool(widths) and search.nodes(BEAM_MIN_LEVELS * 4 * widths[0]) >= BEAM_MIN_LEVELS * 4 * widths[0]
    if first_fits and first_beam:
        last = beam(widths[0])
    left = search.seconds_left()
    if (
        best is None
        and board.shape.walls
        and (layout is not None or not searcher.h.lookups)
        and (left is None or left >= LAYOUT_LEAST)
    ):
        memory = LAYOUT_MEMORY if left is None or left >= t.layout_seconds else LAYOUT_SMALL
        make = layout or (lambda: layout_searcher(board.shape, search, memory=memory))
        rungs = Ladder(board, lower_bound, make, memory, failed[1] if failed and failed[0] <= memory else ())
        ladder(rungs, search)
        tried = (memory, tuple(sorted(rungs.failed)))
        ringed = rungs.back is not None or rungs.built is not None
        if rungs.built is not None:  # the steps below on the layout's tables
            searcher, tag = rungs.built, " on layout tables"
    if first_fits and not first_beam and not ringed:  # step 2 ran without tables, or not at all: step 1 after all
        last = beam(widths[0])
    if best is None and board.shape.walls and not ringed and searcher.h.lookups and not total.out():
        # step 3: a walled board whose own tables misled the first beam (a ring)
        ringed = True
        ladder(Ladder(board, lower_bound, searcher), _share(total, OWN_LADDER_SHARE))
    weights = t.fallback_weights if best is None else t.fallback_weights[:2]
    moves, weight = _weighted(searcher, board, _share(search, WEIGHTED_SHARE), weights)
    keep(moves, f"weighted IDA* {weight / 100:g}{tag}")
    for width in widths[1:]:
        lt = search.seconds_left()
        if ringed or best is None or lt is None or lt < 4 * last or search.out():
            break
        last = beam(width)
    if best is None and not total.out():  # nothing to polish: the polishing share too
        keep(staged_search(board, limits=total), "staged")
    elif best is not None and len(best) > STAGED_RATIO * lower_bound and not search.out():
        keep(staged_search(board, limits=search), "staged")
    if best is not None and not total.out():
        polish_limits = total if time_limit is not None else total.within(POLISH_SECONDS)
        shorter = polish(board, best, limits=polish_limits)
        if len(shorter) < len(best):
            best, label = shorter, f"{label}, polished"
    if best is None:
        return Fallback(None, None, total.spent, tried if tried and tried[1] else None)
    return Fallback(best, label, total.spent)


def _weighted(searcher: Searcher, board: Board, limits: Limits, weights) -> tuple:
    """Weighted IDA* with each weight in turn, each given half of what ``limits`` has
    left (the last all of it), until one answers: (its moves, its weight), or (None, 0)."""
    for k, weight in enumerate(weights):
        if limits.out():
            break
        lt, ln = limits.seconds_left(), limits.nodes()
        if k < len(weights) - 1:  # half of what is left for the next ones
            lt = None if lt is None else lt / 2
            ln = None if ln is None else max(ln // 2, 1)
        result = searcher.solve(board, time_limit=lt, node_limit=ln, weight=weight)
        limits.spend(result.nodes)
        if result.status == "solved":
            return result.moves, weight
    return None, 0


def shorter_search(searcher: Searcher, board: Board, time_limit: float | None, node_limit: int | None, than: int):
    """An answer shorter than ``than`` moves for a board that has one already (a beam's
    or a staged search's, which can be tens of moves over the optimum): weighted IDA*
    of :data:`SHORTER_WEIGHTS` in turn until one answers (at most 1.5 and 2 times the
    optimal length; a weight of 1.5 answered 35 of 40 DevQuiz boards whose first beam
    was 26 moves over the lower bound on average, most in under half a second, 18
    moves shorter on average), then :func:`~solver.fallback.polish.polish` with what
    is left, within :data:`FALLBACK_TIMES` times the limits.  Returns (moves or None
    when nothing shorter than ``than`` was found, how, nodes of every search)."""
    total = Limits(scaled(time_limit, FALLBACK_TIMES), scaled(node_limit, FALLBACK_TIMES))
    search = total.within(scaled(time_limit, SEARCH_TIMES), scaled(node_limit, SEARCH_TIMES))
    best, label = None, None
    for weight, share in SHORTER_WEIGHTS:
        if search.out():
            break
        part = _share(search, share)
        result = searcher.solve(board, time_limit=part.seconds_left(), node_limit=part.nodes(), weight=weight)
        search.spend(result.nodes)
        if result.status == "solved":
            best, label = result.moves, f"weighted IDA* {weight / 100:g}"
            break
    if best is not None and not total.out():
        shorter = polish(board, best, limits=total)
        if len(shorter) < len(best):
            best, label = shorter, f"{label}, polished"
    if best is None or len(best) >= than:
        return None, None, total.spent
    return best, label, total.spent
