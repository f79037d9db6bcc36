"""What proving an unproven board would cost, from the iterations its last search
completed (:func:`solver.outcome.search_cost`): the rounds of ``slidepdb run
--budget`` (:mod:`solver.run.pipeline`) start the cheapest proofs first, and a board
only in a round whose time limit covers its forecast.

IDA* on one board grows by a fairly steady factor from one iteration to the next
(two moves deeper), so the iteration at the lower bound costs about the last
completed one times that factor, and the proof of an answer ``gap`` moves above the
bound costs up to ``gap / 2`` such iterations, each the factor times the one before.
A proof ends at the first iteration that finds a path, and the optimal length of a
board is most often at its bound or two moves above, however far its answer is; so a
forecast counts at most :data:`LIKELY_ITERATIONS` iterations, not every one up to a
poor answer (which kept a board whose short first search gave a poor answer out of
every round but the last).  The forecast is in seconds of one thread at the rate the
last search ran.
"""

from __future__ import annotations

from ..outcome import Outcome
from ..tuning import tuning

# the growth of one iteration over the one before where a board's record shows none
# (one completed iteration or none): the median of the run's boards that show it, or
# GROWTH when none do; every growth is held within GROWTH_RANGE
GROWTH = 5.0
GROWTH_RANGE = (1.5, 50.0)
# an iteration a limit stopped after n nodes costs at least this times n in all
UNFINISHED_TIMES = 1.5
# (the slowest node rate a forecast assumes is the tuning's min_rate: a slower one measured comes
# from loading or compiling the kernel inside a small search's first iteration, not from the search)
# the iterations a proof is forecast to take at most (the bound's and the next): of the
# 14 walled 6x6 boards the rounds proved in hard.txt at --budget 60m, 11 were optimal at
# the bound or two moves above it (their bound after the full pass), 3 four moves above
LIKELY_ITERATIONS = 2


def growth(o: Outcome) -> float | None:
    """The growth per iteration (two moves) that ``o``'s last two completed iterations
    show, or None."""
    its = o.iterations or []
    if len(its) < 2 or its[-2][1] <= 0:
        return None
    steps = max((its[-1][0] - its[-2][0]) // 2, 1)
    lo, hi = GROWTH_RANGE
    return min(max((its[-1][1] / its[-2][1]) ** (1 / steps), lo), hi)


def typical_growth(outcomes) -> float:
    """The median growth of ``outcomes`` that show one (:data:`GROWTH` when none do)."""
    seen = sorted(g for o in outcomes if (g := growth(o)) is not None)
    return seen[len(seen) // 2] if seen else GROWTH


def proof_seconds(o: Outcome, typical: float = GROWTH) -> float | None:
    """Seconds of search (one thread) until the IDA* iterations below ``o``'s answer have
    ended, at most :data:`LIKELY_ITERATIONS` of them (the proof most likely ends there),
    which proves it optimal (0 when it is proven); None when ``o`` has no answer,
    no lower bound, or no record of what its search cost.  ``typical``: the growth per
    iteration where ``o`` shows none (:func:`typical_growth`)."""
    length = o.length if o.solved else None
    bound = o.lower_bound
    if length is None or bound is None:
        return None
    if o.optimal or length <= bound:
        return 0.0
    its = o.iterations or []
    unfinished = o.unfinished
    nodes = sum(n for _, n, _ in its) + (unfinished[1] if unfinished else 0)
    seconds = sum(s for _, _, s in its) + (unfinished[2] if unfinished else 0)
    if nodes <= 0 or seconds <= 0:
        return None
    r = growth(o) or typical
    nxt = its[-1][1] * r ** max((bound - its[-1][0]) // 2, 1) if its else 0.0  # the iteration at the bound
    if unfinished and unfinished[0] == bound:
        nxt = max(nxt, UNFINISHED_TIMES * unfinished[1])
    if nxt <= 0:
        return None
    # thresholds bound, bound + 2, ..., below the answer; the first likely ones of them
    iterations = min(max((length - bound + 1) // 2, 1), LIKELY_ITERATIONS)
    return nxt * sum(r**i for i in range(iterations)) / max(nodes / seconds, tuning().min_rate)
