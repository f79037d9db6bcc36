"""The answer pass's steps and the sizing of builds: what ``slidepdb run`` plans under a
budget in seconds before it builds anything (:func:`answer_step`, :func:`shorten_step`,
pure: the pipeline runs them), and how it sizes its builds to the time left and to the
speed it measures.

The answer pass (:func:`solver.run.next_step.next_step`) gives every board a
short optimal search on the tables already there, then the fallback (a valid answer
when the search does not end), smallest boards first.  Each board's time limit is
decided as it starts (:class:`AnswerLimit`): what lets the boards not yet started
share the pass's part of the budget, so boards that end early leave more to those
after them.  The boards it leaves unanswered go again with :data:`ANSWER_GROWTH`
times the limit, up to :data:`ANSWER_STEPS` steps, before any build; where the budget
has less left, with what it has, if that is more than they had.

Builds then get what the budget has left, at the speed this machine shows now:
:func:`machine_share` (the part of a core each board's process had while it ran,
under 1 when other programs take cores too) scales :data:`~pdb_builder.patterns.BUILD_RATE`,
and :func:`shrunk_plans` and :func:`plans_within` keep the builds (and size the
wall-free patterns) that end within :data:`BUILD_SHARE` of the time left.  A build
running :data:`~solver.run.builds.BEHIND` times longer than its forecast is given up
(:attr:`solver.run.feed.Job.give_up_at`).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from pdb_builder.errors import BoardError

from ..fallback import SHORTER
from ..outcome import Known
from .answer_file import excess_over, totals
from .steps import BOARD_SPAN, Deciding, Step

ANSWER_SHARE = 0.15  # of the time left at the answer pass's start: what its first step may take
ANSWER_MIN = 0.05  # seconds: the first step's limit at least, before the boards show what they take
# (the fallback's first beam and its polishing answer most DevQuiz boards in a tenth of a second)
ANSWER_MAX = 0.25  # ... and at most: proofs are cheaper on the tables the builds bring (on 16 cores
# and the whole DevQuiz file, a limit of up to 1 s took 6 of 8 minutes and left no time to build).
# Capped at 0.05 s instead (whole file, --budget 4h, 2 cores), every board was answered at 824 s, not
# 1,353 s, but the boards the 0.25 s searches prove waited for their sizes' builds: 3,254 proven at
# 50 min, not 3,463
ANSWER_GROWTH = 4  # each later step gives the boards still unanswered this many times their limit
ANSWER_FLOOR = 0.05  # ... and after that, where the time left is short, down to this
RECENT = 20  # the boards ended last whose seconds the first step's limit follows
LATE_SHARE = 0.5  # of the time left at its start: what a later step may give the boards no step reached
ANSWER_STEPS = 6  # 0.05 s to 51 s a board: a walled 6x6 ring can take the fallback over 10 s
BUILD_SHARE = 0.5  # of the time left after the answer pass: what the builds of a pass may take
BUILD_START = 5.0  # seconds a build takes besides its BFS (its kernels loaded, its file written and verified)
MIN_SAMPLES = 3  # boards that tell the machine's speed before it is believed
SHORTEN_LIMIT = 0.25  # seconds a board whose answer is shortened (0.06 s proof, weighted IDA*, polishing)
SHORTEN_COVER = 2.0  # boards shortened at once: the longest over their lower bound until their
# excess adds to this many times the moves the answers are over the file's limits
SHORTEN_SHARE = 0.25  # of the time left: what one shortening step may take
SHORTEN_STEPS = 3  # shortening steps at most (each takes the next boards)


@dataclass(frozen=True)
class AnswerLimit:
    """A time limit decided as each board starts (a rule: its executor applies it,
    :meth:`start`): what lets the ``boards`` not yet started share ``slots`` until
    ``ends_at`` (wall clock), and never more than lets a board end by ``hard_end``.
    Until ``slots`` boards have ended, each is counted at
    :data:`~solver.run.steps.BOARD_SPAN` limits, between ``low`` and ``high``; then the
    limit follows what the last :data:`RECENT` boards took (told as each ends): scaled
    by the seconds a board has over the seconds they took (at most halved or doubled at
    once), between ``floor`` (``low`` where None) and ``high``.  ``fixed``: boards whose
    limit is given (index -> seconds).  The ``now`` as each board starts is the
    executor's (:func:`solver.run.drive.limit_of`): the rule reads no clock."""

    ends_at: float
    boards: int
    slots: int
    low: float
    high: float
    hard_end: float
    floor: float | None = None
    fixed: dict = field(default_factory=dict)  # index -> a board's own limit (a later step's: what it had, grown)

    def start(self) -> Deciding:
        return _Answering(self)


class _Answering(Deciding):
    """:class:`AnswerLimit` as its step runs: the boards not started yet, the seconds
    the last boards took, the last limit given."""

    def __init__(self, rule: AnswerLimit):
        super().__init__()
        self.rule, self.left = rule, rule.boards
        self.recent: list[float] = []  # seconds of the last boards ended
        self.limit: float | None = None  # the last limit given

    def decide(self, rec, now: float) -> float:
        r = self.rule
        slots, floor = max(r.slots, 1), r.low if r.floor is None else r.floor
        self.left -= 1
        latest = max((r.hard_end - now) / BOARD_SPAN, 0.01)  # a board started now ends by the hard end
        if rec.index in r.fixed:
            return min(r.fixed[rec.index], latest)
        each = (r.ends_at - now) * slots / max(self.left + 1, 1)  # seconds a board not started has
        if len(self.recent) < slots or self.limit is None:
            limit = min(r.high, max(r.low, each / BOARD_SPAN))
        else:
            took = max(sum(self.recent) / len(self.recent), 1e-3)
            limit = min(r.high, max(floor, self.limit * min(2.0, max(0.5, each / took))))
        self.limit = limit
        return min(limit, latest)

    def ended(self, seconds: float | None) -> None:
        self.recent = [*self.recent, seconds or 0.0][-RECENT:]


POOR_ANSWER = 1.2  # an answer longer than this times the lower bound (and 2 moves) gets the full pass's fallback


def known_for_full_pass(o):
    """What the full pass starts ``o``'s board from (:class:`~solver.outcome.Known`): with
    its answer (the search is for the proof alone, no fallback) unless that answer is
    over :data:`POOR_ANSWER` times the lower bound, which the fallback on the tables the
    builds brought most likely shortens (the shorter of the two is kept)."""
    known = Known.of(o)
    if known is not None and known.answer is not None and known.answer > POOR_ANSWER * known.lower_bound + 2:
        return known._replace(answer=None)
    return known


def known_for_retry(o):
    """What a later answer step starts ``o``'s board from (:class:`~solver.outcome.Known`):
    its lower bound, and ``ring`` where the fallback found nothing on a walled board that
    no table served (its first beam failed there, or had no time: the layout's tables
    answer such boards far more often, and far shorter than a Manhattan beam given more
    time), with the beams on the layout's tables that failed (``ladder_failed``), which
    the next step passes over."""
    known = Known.of(o)
    if known is None or not (o.status == "limit" and o.walls and not o.tables):
        return known
    memory, widths = o.ladder_failed or (0, ())
    return known._replace(ring=(memory, tuple(widths)))


def unanswered(o) -> bool:
    """A board with no answer yet that a longer search could answer (not rejected)."""
    return o is None or o.status in ("limit", "error")


def machine_share(outcomes) -> float:
    """The median part of a core each board's process had while it ran one thread
    (``cpu_share``, :func:`solver.run.drive.with_cpu_share`), 1 when fewer than
    :data:`MIN_SAMPLES` boards tell it: about 2/3 on a 2-core machine where a third
    program keeps a core busy."""
    shares = [o.cpu_share for o in outcomes if o.cpu_share is not None and (o.seconds or 0) > 0.02]
    if len(shares) < MIN_SAMPLES:
        return 1.0
    return max(0.1, statistics.median(shares))


def entries_in(seconds: float, rate: float, slots: int) -> float:
    """The entries builds make in ``seconds`` at ``rate`` entries a thread-second on ``slots`` threads."""
    return max(seconds, 0.0) * rate * max(slots, 1)


def shrunk_plans(plans, plan_of, can: float, memory_limit: int, floor: int) -> list:
    """``plans`` (:class:`~solver.run.builds.Plan` made by ``plan_of(records, memory_limit)``)
    made to hold ``can`` entries in all: the largest plan re-planned for its boards at half its
    memory (smaller patterns: a weaker but quicker table) while they hold more, down to
    ``floor`` or the smallest patterns its size allows (one that cannot shrink then is
    left out); then those that serve the most boards grown back at twice their memory
    while all still fit."""
    plans = [(p, memory_limit) for p in plans]
    while plans and sum(p.entries for p, _ in plans) > can:
        k = max(range(len(plans)), key=lambda i: plans[i][0].entries)
        p, memory = plans[k]
        memory //= 2
        try:
            smaller = plan_of(p.records, memory) if memory >= floor else None
        except BoardError:  # a size whose patterns cannot be that small
            smaller = None
        if smaller is None:
            del plans[k]
        elif sum(q.entries for q in smaller) < p.entries:
            plans[k : k + 1] = [(q, memory) for q in smaller]
        else:  # the same patterns at half the memory: halved again next
            plans[k] = (p, memory)
    total, grew = sum(p.entries for p, _ in plans), True
    while grew:  # then the plans that serve the most boards larger again while all still fit
        grew = False
        for k in sorted(range(len(plans)), key=lambda i: -plans[i][0].boards):
            p, memory = plans[k]
            if memory * 2 > memory_limit:
                continue
            try:
                larger = plan_of(p.records, memory * 2)
            except BoardError:
                continue
            more = sum(q.entries for q in larger) - p.entries
            if len(larger) == 1 and total + more <= can:
                plans[k], total, grew = (larger[0], memory * 2), total + more, True
    return merged([p for p, _ in plans])


def merged(plans) -> list:
    """``plans`` with those that build the same files (boards re-planned apart that
    share a size) made one, serving the boards of both."""
    out: dict = {}
    for p in plans:
        key = (p.shape.key, tuple(part.name for part in p.partitions))
        if key in out:
            out[key].records += [r for r in p.records if r not in out[key].records]
            out[key].boards = len(out[key].records)
        else:
            out[key] = p
    return list(out.values())


def plans_within(plans, can: float) -> list:
    """The plans of ``plans`` that fit ``can`` entries in all, taken in their order (one
    that would not fit is passed over)."""
    out, total = [], 0
    for p in plans:
        if total + p.entries <= can:
            out.append(p)
            total += p.entries
    return out


def step_least(least: float, left: float, step: int) -> float | None:
    """The least limit answer step ``step`` (0 the first) gives its boards, with
    ``least`` the least they were to have and ``left`` seconds of the pass: ``least``
    where a board of it ends in time; at a later step, else what a board starting now
    can have, where that is more than they had the step before; else None (no step)."""
    if step:
        least = min(least, max(left / BOARD_SPAN, least / ANSWER_GROWTH))
    return None if BOARD_SPAN * least > left else least


def answer_order(records) -> list:
    """The order of the answer pass: the smallest boards (fewest free cells) first."""
    return sorted(records, key=lambda r: (len(r.board.shape.free_cells) if r.board else 0, r.index))


def answer_step(number: int, todo, grown: dict, share: float, best: dict, budget, now: float, slots: int, nodes):
    """Answer step ``number`` (1 the first) at ``now``, under ``budget``
    (:class:`~solver.run.planning.Budget`): every board of ``todo`` a short optimal search
    on the tables there are and then the fallback, each board's limit decided as it
    starts (:class:`AnswerLimit`, ``share`` of the time left for the step,
    ``slots`` boards at once; ``grown``: index -> the limit a board left unanswered has
    now, grown from its last); a later step retries its boards from what they proved and
    found (``best``: each board's best outcome so far).  None where no board of it would
    end in time (:func:`step_least`)."""
    end = budget.end()
    least = step_least(
        min((grown.get(r.index, ANSWER_FLOOR) for r in todo), default=ANSWER_FLOOR), end - now, number - 1
    )
    if least is None:
        return None
    ends_at = now + share * (end - now)
    limit = AnswerLimit(ends_at, len(todo), slots, ANSWER_MIN, ANSWER_MAX, end, ANSWER_FLOOR, dict(grown))
    again = number > 1
    return Step(
        "answer",
        list(todo),
        limit,
        node_limit=nodes,
        fallback=True,
        retry=[r.index for r in todo] if again else [],
        last_start=end - BOARD_SPAN * least,
        known={r.index: k for r in todo if (k := known_for_retry(best.get(r.index)))} if again else None,
        number=number,
    )


def answer_again(order, best: dict, given: dict, grown: dict) -> tuple[list, dict]:
    """After an answer step that gave ``given`` (index -> seconds) to its boards: the
    boards of ``order`` still unanswered, the shortest limit first (the most answers
    soonest), and the limit each has next (its last grown :data:`ANSWER_GROWTH` times;
    one the step did not reach keeps what ``grown`` gave it)."""
    todo = [r for r in order if unanswered(best.get(r.index))]
    grown = {
        r.index: ANSWER_GROWTH * given[r.index] if r.index in given else grown[r.index]
        for r in todo
        if r.index in given or r.index in grown
    }
    todo.sort(key=lambda r: grown.get(r.index, 0.0))
    return todo, grown


def over_limits(outcomes, limits) -> int:
    """How many moves the answers of ``outcomes`` are over ``limits`` (L, R, U, D), the
    directions over added up (0: they fit, or there are no limits)."""
    if limits is None:
        return 0
    return sum(excess_over(totals(x.moves for x in outcomes if x.solved), limits).values())


def to_shorten(outcomes: dict, excess: int, tried=()) -> list[int]:
    """Indices of the unproven answers of ``outcomes`` (index -> outcome) longest over
    their lower bounds first, not in ``tried``, until their excess over their bounds
    adds to :data:`SHORTEN_COVER` times ``excess``."""
    gaps = sorted(
        ((x.gap, i) for i, x in outcomes.items() if x.solved and not x.proven and i not in tried),
        reverse=True,
    )
    out, cover = [], 0
    for gap, i in gaps:
        if cover >= SHORTEN_COVER * excess or gap <= 0:
            break
        out.append(i)
        cover += gap
    return out


def shorten_step(number: int, order, best: dict, tried, limits, budget, now: float, nodes):
    """Shortening step ``number`` (1 the first) at ``now``, while the answers of
    ``order``'s boards (``best``: each board's best outcome) are over the file's move
    ``limits`` (the DevQuiz file's first line) and ``budget`` allows: the unproven
    answers longest over their lower bounds (:func:`to_shorten`, none of ``tried``)
    searched again for shorter ones (``fallback=SHORTER``:
    :func:`solver.fallback.ladder.shorter_search`), :data:`SHORTEN_LIMIT` seconds each,
    the step taking at most :data:`SHORTEN_SHARE` of the time left.  None: nothing to
    shorten, or no time."""
    mine = {r.index: best[r.index] for r in order if r.index in best}
    excess = over_limits(mine.values(), limits)
    todo = to_shorten(mine, excess, tried) if excess else []
    end = budget.end()
    if not todo or now + BOARD_SPAN * SHORTEN_LIMIT > end:
        return None
    recs = {r.index: r for r in order}
    return Step(
        "shorten",
        [recs[i] for i in todo],
        SHORTEN_LIMIT,
        node_limit=nodes,
        fallback=SHORTER,
        retry=todo,
        last_start=min(end - BOARD_SPAN * SHORTEN_LIMIT, now + SHORTEN_SHARE * (end - now)),
        known={i: Known.of(mine[i]) for i in todo},
        number=number,
    )
