"""The planners of ``slidepdb run``: pure functions that make the quick pass, the full
pass and each round a :class:`~solver.run.steps.Step` from the time now and what is
known so far, and the budget's arithmetic they rest on (:class:`Budget`: what is kept
back, each round's limit, the full pass's limit, which boards a round takes and in what
order).  They read no clock and write nothing; :mod:`solver.run.pipeline` runs the
steps they plan (the answer pass's steps are :mod:`solver.run.answer_pass`'s)."""

from __future__ import annotations

from dataclasses import dataclass, field

from pdb_builder.patterns import BUILD_RATE
from pdb_builder.words import plural, seconds_text

from ..outcome import Known, Outcome
from ..tuning import tuning
from .forecast import proof_seconds, typical_growth
from .steps import BOARD_SPAN, QUICK_SPAN, Deciding, Step

# --budget: the seconds kept back to write the answer file (a board's worst wall time in
# time limits: solver.run.steps.BOARD_SPAN), the tuning's reserve (solver.tuning); under a
# budget shorter than that over RESERVE_SHARE, RESERVE_SHARE of it, at least RESERVE_MIN (a
# minute's budget keeps 6 s, not half of it)
RESERVE_SHARE = 0.1
RESERVE_MIN = 5.0
# seconds the boards of the budget's last round have to start (its limit is what is left after
# them; a board given that limit and started later could outlast the budget, so it does not
# start); scaled with the reserve under a short budget
START_WINDOW = 15.0
MAX_LAYOUT_PARTITIONS = 5
# a round's time limit at least this times the last one's (the full pass's before the
# first): a round with less than that would retry its boards at about the limit they had
ROUND_GROWTH = 1.25
# the full pass's time limit: the default, and with a budget in seconds the share of
# what is left that the full pass may take (the rest goes to the rounds), at least MIN
DEFAULT_TIME_LIMIT = 60.0
FULL_PASS_SHARE = 0.5
MIN_TIME_LIMIT = 5.0
NOT_STARTED = "not started: the budget's last start came first"


def reserve_for(budget: float) -> float:
    """The seconds a budget of ``budget`` seconds keeps back (the tuning's ``reserve``)."""
    return min(tuning().reserve, max(RESERVE_MIN, RESERVE_SHARE * budget))


@dataclass(frozen=True)
class Budget:
    """The budget as the planners see it: ``deadline``, the wall-clock time the run's
    running time reaches it (None: no budget in seconds), and ``reserve``, the seconds
    kept back to write the answers (:func:`reserve_for`)."""

    deadline: float | None = None
    reserve: float = field(default_factory=lambda: tuning().reserve)

    @classmethod
    def of(cls, deadline: float | None, budget: float | None) -> Budget:
        """The budget of ``budget`` seconds that ends at ``deadline`` (None: none)."""
        return cls(deadline, tuning().reserve if deadline is None or budget is None else reserve_for(budget))

    def end(self) -> float | None:
        """When the last board must have ended: the deadline less the reserve."""
        return None if self.deadline is None else self.deadline - self.reserve

    def left(self, now: float) -> float | None:
        """Seconds until :meth:`end` at ``now`` (None: no budget)."""
        return None if self.deadline is None else self.deadline - self.reserve - now

    def last_start(self, limit: float, span: float = BOARD_SPAN) -> float | None:
        """When a board given ``limit`` seconds (``span`` limits at most) must have
        started to end before the budget does (None: no budget)."""
        return None if self.deadline is None else self.deadline - self.reserve - span * limit


def known_of(outcomes: dict[int, Outcome]) -> dict[int, Known]:
    """What each of ``outcomes`` proved and found (those that proved nothing left out)."""
    return {i: known for i, o in outcomes.items() if (known := Known.of(o)) is not None}


def worth_waiting_for(plans, limit: float, rate: float = BUILD_RATE) -> list:
    """The builds of ``plans`` that take (at ``rate`` entries a thread-second) no longer
    than the searches of the boards they serve at ``limit`` seconds each: a round's boards
    wait for their builds, and a longer build costs more than any proof it might bring."""
    return [p for p in plans if p.entries / rate <= limit * p.boards]


def with_filled_cuts(plans, filled, limit: float, rate: float = BUILD_RATE) -> list:
    """A round's builds: each layout's plan from ``filled`` (the same cuts and the one
    that fills the memory, :func:`~solver.run.builds.plan_layouts` with ``fill``, for
    the boards whose forecast proof is over the round's limit) where it is worth
    waiting for (:func:`worth_waiting_for`), else its plan from ``plans`` where that
    one is; the cheapest a board first.  A filled cut is far larger than the even ones
    beside it, so a round that cannot wait for it still builds those."""
    chosen = {p.shape.key: p for p in worth_waiting_for(plans, limit, rate)}
    chosen.update((p.shape.key, p) for p in worth_waiting_for(filled, limit, rate))
    return sorted(chosen.values(), key=lambda p: (p.per_board, p.shape.key))


def not_started_text(count: int, budget: float, none: bool) -> str:
    """Why ``count`` boards never started under ``budget`` seconds (``none``: no board did)."""
    given, kept = seconds_text(budget), seconds_text(reserve_for(budget))
    why = (
        f"the budget of {given} left no time to start a board after the {kept} it keeps to write the answers"
        if none
        else f"the budget of {given} ran out before they could start"
    )
    return f"{plural(count, 'board')} not started: {why}; give a longer --budget (or --resume with one)"


def round_limit(
    full_limit: float, k: int, deadline: float, span: float, now: float, reserve: float | None = None
) -> tuple[float, bool]:
    """Round ``k``'s time limit, and whether it is the last round: 2^k times the full
    pass's, or what the budget has left, ``reserve`` kept, once the round's boards have
    had :data:`START_WINDOW` seconds (scaled as ``reserve`` is) to start (a board lasts
    ``span`` limits at most)."""
    full, most = full_limit * 2**k, tuning().reserve
    reserve = most if reserve is None else reserve
    left = (deadline - reserve - START_WINDOW * reserve / most - now) / span
    return (full, False) if full <= left else (left, True)


@dataclass(frozen=True)
class UntilEnd:
    """The budget's last round's time limit, decided as each board starts (a rule: its
    executor applies it, :meth:`start`): what the budget has left to ``end`` (wall
    clock, at the ``now`` the executor hands it), a board lasting ``span`` limits at
    most.  A board that ends early hands its slot to the next board with what is left,
    instead of leaving it idle to the end."""

    end: float
    span: float

    def start(self) -> Deciding:
        return _Until(self)


class _Until(Deciding):
    def __init__(self, rule: UntilEnd):
        super().__init__()
        self.rule = rule

    def decide(self, rec, now: float) -> float:
        return max((self.rule.end - now) / self.rule.span, 0.01)


def round_boards(unproven, final: dict[int, Outcome], forecast: dict, limit: float, last: bool) -> list:
    """The boards of a round at ``limit`` seconds, in the order they start: each whose
    limit grows by :data:`ROUND_GROWTH` at least (one given about this limit before, in
    an earlier round or sitting, would search what it searched), and whose forecast proof
    fits the limit, else it waits for a round whose limit covers it; in the ``last``
    round (what the budget has left) no later round covers it, and it starts after those
    whose forecast fits: a forecast is an estimate, and the time is the budget's either way."""
    return sorted(
        (
            r
            for r in unproven
            if tried_limit(final[r.index]) * ROUND_GROWTH <= limit and (last or (forecast[r.index] or 0.0) <= limit)
        ),
        key=lambda r: round_order(final[r.index], forecast[r.index]),
    )


def round_order(o: Outcome, forecast: float | None):
    """Sort key of a round's board: those without an answer first, then the cheapest
    forecast proof (:func:`~solver.run.forecast.proof_seconds`), then (no forecast)
    the smallest gap to the lower bound."""
    if o.length is None:
        return (0, 0.0, 0)
    return (1, float("inf") if forecast is None else forecast, o.gap)


def retry_order(o: Outcome | None, closest: bool = False, attempts: int = 0):
    """Sort key of a full-pass board: the fewest earlier attempts first (a retry run
    again after a kill goes on with the boards it had not reached), then worst first:
    not solved yet or no answer, then the largest gap to the lower bound; so an
    interrupted retry has mended the most.  ``closest``: the smallest gap first (the
    proofs a longer search most likely completes)."""
    if o is None or o.length is None:
        return attempts, -(1 << 30)
    gap = o.gap
    return attempts, gap if closest else -gap


def full_pass_limit(
    deadline: float, todo, slots: int, now: float, building: float = 0.0, reserve: float | None = None
) -> float:
    """The full pass's time limit under a budget (``deadline``) with no --time-limit:
    what lets ``todo`` take about FULL_PASS_SHARE of what is left at one limit a
    board on average (the measured mean: most are proven early, the unproven take up
    to BOARD_SPAN limits), ``slots`` boards at once, less the ``building``
    thread-seconds of the builds that share the slots; ``now``: the time it is planned."""
    if not todo:
        return DEFAULT_TIME_LIMIT
    left = deadline - (tuning().reserve if reserve is None else reserve) - now
    fit = FULL_PASS_SHARE * (left * max(slots, 1) - building) / len(todo)
    return round(min(DEFAULT_TIME_LIMIT, max(MIN_TIME_LIMIT, fit)), 1)


def tried_limit(o: Outcome) -> float:
    """The largest time limit ``o``'s board has been given (0 when not recorded)."""
    return float("inf") if o.time_limit is None else float(o.time_limit)


# -- the steps -----------------------------------------------------------------------------


def quick_step(todo, plans, lacking: set[int], best: dict, budget: Budget, limit: float, nodes) -> Step:
    """The quick pass over ``todo`` (records): optimal search only, ``limit`` seconds and
    ``nodes`` a board, waiting on the builds of ``plans``.  The boards whose tables are
    there first, then the wall-free builds' and then the exact layouts', each the
    cheapest a board first (entries over the boards that wait on it: the most proofs
    soonest; a build alone on the slots grows onto the idle ones, so the largest going
    last leaves none idle); last the boards in ``lacking`` (indices of boards whose
    tables no build brings in time: answered already, a proof on Manhattan distance
    alone is the least likely).  ``best``: each board's best outcome so far."""
    cost = {r.index: (1, p.role == "layout", p.per_board) for p in plans for r in p.records}
    order = sorted(todo, key=lambda r: cost.get(r.index, (2 if r.index in lacking else 0, 0, 0)))
    return Step(
        "quick",
        order,
        limit,
        node_limit=nodes,
        fallback=False,
        plans=list(plans),
        last_start=budget.last_start(limit, QUICK_SPAN),
        known=known_of({r.index: best[r.index] for r in todo if r.index in best}),
    )


def full_step(rest, again: dict, plans, known: dict, budget: Budget, limit: float, nodes, fallback) -> Step:
    """The full pass over ``rest`` (records, in their order: the retried ones, index ->
    earlier outcome in ``again``, sorted already), ``limit`` seconds and ``nodes`` a
    board with ``fallback``, waiting on the builds of ``plans``; with nothing retried,
    the boards whose tables are there first, then the cheapest layout build a board.
    ``known``: what each board starts from (index -> :class:`~solver.outcome.Known`)."""
    if not again:
        cost = {r.index: p.per_board for p in plans for r in p.records}
        rest = sorted(rest, key=lambda r: cost.get(r.index, 0))
    return Step(
        "full",
        list(rest),
        limit,
        node_limit=nodes,
        fallback=fallback,
        plans=list(plans),
        retry=list(again),
        last_start=budget.last_start(limit),
        known={**known, **known_of(again)},
    )


def round_step(
    k: int,
    rest,
    final: dict[int, Outcome],
    full_limit: float,
    budget: Budget,
    now: float,
    fallback: bool,
    nodes,
) -> tuple[Step | None, int]:
    """Round ``k`` (1 the first) at ``now``: the unproven boards of ``rest`` (records
    with an outcome in ``final``) again at 2^k times ``full_limit``, or, where the budget
    has less left, what it has (the last round: each board what is left as it starts,
    :class:`UntilEnd`, and a later last start where the boards had more
    before); a board with an answer searches for the proof alone (the ``fallback`` only
    while a board has none).  Returns the step (no builds planned yet: ``plans`` empty;
    None when no board is unproven) and how many boards wait for a longer limit than
    this round's (their forecast proofs do not fit it).  ``nodes``: the full pass's node
    limit (None: none), doubled each round."""
    unproven = [r for r in rest if final.get(r.index) is not None and not final[r.index].proven]
    if not unproven:
        return None, 0
    fallback = fallback and any(final[r.index].status != "solved" for r in unproven)
    span = BOARD_SPAN if fallback else QUICK_SPAN
    limit, last = round_limit(full_limit, k, budget.deadline, span, now, budget.reserve)
    typical = typical_growth(final[r.index] for r in unproven)
    forecast = {r.index: proof_seconds(final[r.index], typical) for r in unproven}
    todo = round_boards(unproven, final, forecast, limit, last)
    waiting = 0 if last else sum(1 for f in forecast.values() if f is not None and f > limit)
    time_limit, last_start = limit, budget.last_start(limit, span)  # one started later might outlast the budget
    if last and todo:  # each board what is left as it starts, while that is more than any of them had
        floor = max(full_limit, min(tried_limit(final[r.index]) for r in todo) * ROUND_GROWTH)
        time_limit = UntilEnd(budget.end(), span)
        last_start = max(last_start, budget.last_start(floor, span))
    step = Step(
        "round",
        todo,
        time_limit,
        node_limit=None if nodes is None else nodes * 2**k,
        fallback=fallback,
        retry=[r.index for r in todo],
        last_start=last_start,
        known=known_of({r.index: final[r.index] for r in todo}),
        number=k,
        last=last,
        limit=limit,
        over=[r.index for r in todo if forecast[r.index] is None or forecast[r.index] > limit],
    )
    return step, waiting
