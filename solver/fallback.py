"""A valid answer when a limit stops the optimal search: the fallback policy.

A board's fallback has :data:`FALLBACK_SHARE` times the board's limits (seconds and
nodes) on top of the optimal search's, so a board takes at most
``(1 + FALLBACK_SHARE)`` times its limits in all, plus start-up and one slice of
work (see :mod:`solver.budget`).  Within it, in turn:

1. a beam of the first width of :data:`BEAM_WIDTHS` (fast, rarely fails), unless a
   node budget could not pay for :data:`BEAM_MIN_LEVELS` levels of it;
2. weighted IDA*, the weights of :data:`FALLBACK_WEIGHTS` in turn, each with half of
   what is left of its share (:data:`WEIGHTED_SHARE` of the search time left; only
   1.5 and 2 once the beam has answered: larger weights rarely beat it), until one answers;
3. wider beams while the next is expected to fit (each takes about four times the last);
4. staged search (:func:`solver.staged.staged_search`: tile groups placed in turn,
   bounded memory) with what is left of the search phase, when nothing answered or
   the best is over :data:`STAGED_RATIO` times the lower bound (a beam can wander for
   hundreds of moves);
5. :func:`solver.polish.polish` (windows of the path solved optimally) with what is
   left of the whole fallback share, at least ``FALLBACK_SHARE - SEARCH_SHARE`` limits.
"""

from __future__ import annotations

import time

from pdb_builder.board import Board

from .beam import beam_search
from .budget import Budget
from .ida import Searcher
from .polish import polish
from .staged import staged_search

FALLBACK_SHARE = 1.5  # the fallback's limits, as a multiple of the board's
SEARCH_SHARE = 1.25  # of which the searches (1-4) take at most this; polishing the rest
WEIGHTED_SHARE = 0.5  # weighted IDA* takes at most this part of the search time left after the first beam
FALLBACK_WEIGHTS = (150, 200, 300, 500, 1000)  # percent; weighted IDA*, in turn
BEAM_WIDTHS = (1024, 4096, 16384)  # beam search, widening while time allows
BEAM_MIN_LEVELS = 16  # a node budget too small for this many levels of the first beam goes to weighted IDA*
POLISH_SECONDS = 10.0  # polishing time of a fallback answer when only a node limit is given
STAGED_RATIO = 2  # staged search is tried too when the best answer is this many times the lower bound


def _scaled(limit, share):
    return None if limit is None else limit * share


def fallback_search(searcher: Searcher, board: Board, time_limit: float | None, node_limit: int | None,
                    lower_bound: int = 0):
    """The shortest valid answer the steps of the module docstring find within
    :data:`FALLBACK_SHARE` times ``time_limit`` and ``node_limit`` (at least one of
    them given).  Returns (moves or None, how it was found, nodes of every search)."""
    if time_limit is None and node_limit is None:
        raise ValueError("the fallback needs a time or node limit to share out")
    total = Budget(_scaled(time_limit, FALLBACK_SHARE), _scaled(node_limit, FALLBACK_SHARE))
    search = total.within(_scaled(time_limit, SEARCH_SHARE), _scaled(node_limit, SEARCH_SHARE))
    best, label = None, None

    def keep(moves, how):
        nonlocal best, label
        if moves is not None and (best is None or len(moves) < len(best)):
            best, label = moves, how

    t = time.perf_counter()
    if BEAM_WIDTHS and search.nodes(BEAM_MIN_LEVELS * 4 * BEAM_WIDTHS[0]) >= BEAM_MIN_LEVELS * 4 * BEAM_WIDTHS[0]:
        keep(beam_search(searcher, board, width=BEAM_WIDTHS[0], budget=search), f"beam width {BEAM_WIDTHS[0]}")
    last = time.perf_counter() - t  # what a beam took, to judge whether the next, wider one fits
    weights = FALLBACK_WEIGHTS if best is None else FALLBACK_WEIGHTS[:2]
    weighted = search.within(_scaled(search.seconds_left(), WEIGHTED_SHARE), _scaled(search.nodes(), WEIGHTED_SHARE))
    for k, weight in enumerate(weights):
        if weighted.out():
            break
        lt, ln = weighted.seconds_left(), weighted.nodes()
        if k < len(weights) - 1:  # half of what is left for the next ones
            lt = None if lt is None else lt / 2
            ln = None if ln is None else max(ln // 2, 1)
        result = searcher.solve(board, time_limit=lt, node_limit=ln, weight=weight)
        weighted.spend(result.nodes)
        if result.status == "solved":
            keep(result.moves, f"weighted IDA* {weight / 100:g}")
            break
    for width in BEAM_WIDTHS[1:]:
        lt = search.seconds_left()
        if best is None or lt is None or lt < 4 * last:
            break
        t = time.perf_counter()
        keep(beam_search(searcher, board, width=width, budget=search), f"beam width {width}")
        last = time.perf_counter() - t
    if (best is None or len(best) > STAGED_RATIO * lower_bound) and not search.out():
        keep(staged_search(board, budget=search), "staged")
    if best is not None and not total.out():
        polish_budget = total if time_limit is not None else total.within(POLISH_SECONDS)
        shorter = polish(board, best, budget=polish_budget)
        if len(shorter) < len(best):
            best, label = shorter, f"{label}, polished"
    return best, label, total.spent
