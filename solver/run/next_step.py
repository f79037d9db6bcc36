"""The run's planning as one pure function: :func:`next_step` makes the next
:class:`~solver.run.steps.Step` from a :class:`RunState` (what is known: the boards'
outcomes, the steps this sitting ran and what each gave, the database folder's file
names, the sittings and their marks, the full pass's journal) and the time now.

It reads no clock, no journal and no folder, and writes nothing: the loop
(:meth:`solver.run.pipeline.Run.steps`) reads them into the state before each call and
applies what a step says besides its boards (``marks`` for the sittings to come,
``faults`` and ``notes`` for the log, ``rate`` for the builds' forecasts).  The order::

    answer 1..6 -> shorten 1..3 -> quick pass -> full pass -> round 1..k

the answer and shortening steps under a budget in seconds with the fallback
(:func:`answers_first`); the rounds under a budget, until one is the last or a
full pass or round was interrupted.  Each kind's arithmetic is
:mod:`solver.run.answer_pass`'s and :mod:`solver.run.planning`'s."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from pdb_builder.words import plural

from ..outcome import Outcome, better
from .answer_pass import (
    ANSWER_SHARE,
    ANSWER_STEPS,
    BUILD_SHARE,
    BUILD_START,
    LATE_SHARE,
    SHORTEN_STEPS,
    answer_again,
    answer_order,
    answer_step,
    entries_in,
    known_for_full_pass,
    machine_share,
    plans_within,
    shorten_step,
    shrunk_plans,
)
from .options import AUTO_BUDGET, RunOptions
from .planning import (
    DEFAULT_TIME_LIMIT,
    MAX_LAYOUT_PARTITIONS,
    Budget,
    full_pass_limit,
    full_step,
    quick_step,
    reserve_for,
    retry_order,
    round_step,
    with_filled_cuts,
)
from .plans import plan_first, plan_layouts, plan_wall_free_cuts
from .sittings import deadline_of
from .steps import BatchResult, Step


@dataclass(frozen=True)
class RunState:
    """What the run's planning knows before a step: the file's ``records``, the run's
    ``opts``, the worker ``slots``, the ``budget`` as the sitting began, ``rate`` (the
    entries a build makes a thread-second before the answer pass measures the
    machine), the sittings' ``spans`` ((start, end) pairs, wall clock) and ``marks``
    (:class:`~solver.run.sittings.Sittings`), the database ``folder``'s file names,
    each board's ``best`` outcome and those that are ``final``, the steps this sitting
    ``ran`` with what each gave, and, where the full pass is next
    (:func:`wants_journal`), its journalled outcomes (``journal_full``) and how many
    times each board was journalled by it (``tries``)."""

    records: tuple
    opts: RunOptions
    slots: int
    budget: Budget
    rate: float
    spans: tuple = ()
    marks: Mapping[str, float] = field(default_factory=dict)
    folder: frozenset[str] = frozenset()
    best: Mapping[int, Outcome] = field(default_factory=dict)
    final: Mapping[int, Outcome] = field(default_factory=dict)
    ran: tuple[tuple[Step, BatchResult], ...] = ()
    journal_full: Mapping[int, Outcome] = field(default_factory=dict)
    tries: Mapping[int, int] = field(default_factory=dict)

    def steps_of(self, *kinds: str) -> list[tuple[Step, BatchResult]]:
        """The steps of ``kinds`` this sitting ran, in order, with what each gave."""
        return [(s, r) for s, r in self.ran if s.kind in kinds]


def answers_first(opts: RunOptions, budget: Budget) -> bool:
    """Whether the run answers every board before any build: under a budget in seconds,
    with the fallback, and not ``--proofs-first``."""
    return budget.deadline is not None and bool(opts.fallback) and opts.answers_first


def wants_journal(state: RunState) -> bool:
    """Whether the next step is the full pass, which starts from the journal's lines of it."""
    return bool(state.ran) and state.ran[-1][0].kind == "quick"


def next_step(state: RunState, now: float) -> Step | None:
    """The step to run next at ``now`` (the module docstring's order), or None: the run's
    steps are over."""
    if not state.ran or state.ran[-1][0].kind in ("answer", "shorten"):
        return _answer_step(state, now) or _shorten_step(state, now) or _quick_step(state, now)
    if state.ran[-1][0].kind == "quick":
        return _full_step(state, now)
    return _round_step(state, now)


# -- the answer pass -----------------------------------------------------------------------


def _answer_step(state: RunState, now: float) -> Step | None:
    """The next answer step: every board a short optimal search on the tables there are
    and then the fallback, smallest boards first; the boards left unanswered again with
    longer limits (:func:`~solver.run.answer_pass.answer_again`, from the limits each
    step gave), up to :data:`~solver.run.answer_pass.ANSWER_STEPS` steps."""
    if not answers_first(state.opts, state.budget) or state.steps_of("shorten"):
        return None
    done = state.steps_of("answer")
    if len(done) >= ANSWER_STEPS:
        return None
    order = answer_order(state.records)
    todo, grown = order, {}
    for _, result in done:
        todo, grown = answer_again(order, state.best, result.given, grown)
    if done and not todo:
        return None
    o = state.opts
    share = LATE_SHARE if done else ANSWER_SHARE
    return answer_step(len(done) + 1, todo, grown, share, state.best, state.budget, now, state.slots, o.node_limit)


def _shorten_step(state: RunState, now: float) -> Step | None:
    """Where the answers are over the file's move limits: the answers longest over their
    lower bounds searched again for shorter ones, up to
    :data:`~solver.run.answer_pass.SHORTEN_STEPS` steps, none twice."""
    done = [s for s, _ in state.steps_of("shorten")]
    if not answers_first(state.opts, state.budget) or len(done) >= SHORTEN_STEPS:
        return None
    tried = {i for s in done for i in s.retry}
    o, order = state.opts, answer_order(state.records)
    return shorten_step(len(done) + 1, order, state.best, tried, o.limits, state.budget, now, o.node_limit)


# -- the builds ----------------------------------------------------------------------------


def build_rate(state: RunState) -> float:
    """The entries a build makes a thread-second: the quick pass's where it ran (the
    rate the answer pass measured), else ``state.rate`` scaled by the part of a core
    the answer pass's boards had (:func:`~solver.run.answer_pass.machine_share`)."""
    for s, _ in state.steps_of("quick"):
        return s.rate
    return state.rate * machine_share(state.best.values()) if answers_first(state.opts, state.budget) else state.rate


def build_room(state: RunState, now: float) -> float | None:
    """Under a budget in seconds, the entries builds can make in
    :data:`~solver.run.answer_pass.BUILD_SHARE` of the time left (None: no budget); 0
    where that share is shorter than a build's start
    (:data:`~solver.run.answer_pass.BUILD_START`): then nothing is planned."""
    left = state.budget.left(now)
    if left is None:
        return None
    share = BUILD_SHARE * left
    return entries_in(share, build_rate(state), state.slots) if share > BUILD_START else 0.0


def quick_builds(state: RunState, todo, now: float, faults: dict) -> tuple[list, set[int], tuple]:
    """The quick pass's builds for ``todo``: wall-free databases, one per size (and
    goal) under ``memory_limit``, or the exact layouts' where every board of a size
    is walled (:func:`~solver.run.plans.plan_first`), smaller where the largest would
    not end in time; the boards whose tables no build brings in time; and a line for
    the log where builds were made smaller."""
    o, room = state.opts, build_room(state, now)
    if not o.build or room == 0:
        return [], set(), ()

    def plan_of(recs, memory, faults=None):  # (the smaller ones tried: a BoardError says they cannot be)
        return plan_first(recs, state.folder, memory, min(memory, o.layout_memory), o.layout_count, faults)

    plans = plan_of(todo, o.memory_limit, faults)
    lacking = _boards_of(plans)  # boards of shapes without tables
    if room is None or not lacking:
        return plans, lacking, ()
    plans = shrunk_plans(plans, plan_of, room, o.memory_limit, o.layout_memory >> 3)
    served = _boards_of(plans)  # (a board two plans serve: once)
    note = "quick pass: {} planned ({:,} entries) for {}; {} without tables in the time left".format(
        plural(sum(len(p.partitions) for p in plans), "build"),
        sum(p.entries for p in plans),
        plural(len(served), "board"),
        plural(len(lacking - served), "board"),
    )
    return plans, lacking, (note,)


def full_builds(state: RunState, todo, now: float, faults: dict) -> list:
    """The full pass's builds for ``todo``: ``wall_free_count`` wall-free cuts of each
    size and, for each walled board, its layout's databases (``layout_memory`` a
    pattern BFS, ``layout_count`` cuts); under a budget those that end in time, the
    cheapest a board first."""
    o, room = state.opts, build_room(state, now)
    if not o.build or room == 0:
        return []
    plans = plan_wall_free_cuts(todo, state.folder, o.layout_memory, o.wall_free_count, faults)
    plans += plan_layouts(todo, state.folder, o.layout_memory, o.layout_count, faults)
    return plans if room is None else plans_within(plans, room)


def round_builds(state: RunState, step: Step, faults: dict) -> list:
    """Round ``step``'s builds: its boards' layouts with larger partitions (one more
    cut and twice the memory a round, and, for the boards whose forecast proof is
    over the round's limit, the cut that fills the memory where the even ones do
    not) where a build takes no longer than the searches of the boards it serves at
    the round's limit (:func:`~solver.run.planning.with_filled_cuts`)."""
    o, k = state.opts, step.number
    if not o.build:
        return []
    count = min(MAX_LAYOUT_PARTITIONS, o.layout_count + k)
    memory = min(o.memory_limit, o.layout_memory << k)
    plans = plan_layouts(step.boards, state.folder, memory, count, faults)
    over = set(step.over)
    layouts = {r.board.shape.key for r in step.boards if r.index in over}
    same = [r for r in step.boards if r.board.shape.key in layouts]  # (all of a layout's boards wait)
    filled = plan_layouts(same, state.folder, memory, count, faults, fill=True)
    return with_filled_cuts(plans, filled, step.limit, build_rate(state))


# -- the passes ----------------------------------------------------------------------------


def _quick_step(state: RunState, now: float) -> Step:
    """Every board not final yet, each size's as soon as its wall-free database is built
    (:func:`~solver.run.planning.quick_step`)."""
    o, faults = state.opts, {}
    todo = [r for r in state.records if r.index not in state.final]
    plans, lacking, notes = quick_builds(state, todo, now, faults)
    caps = [x for x in (o.node_limit, o.quick_node_limit) if x is not None]
    step = quick_step(todo, plans, lacking, state.best, state.budget, o.quick_limit, min(caps, default=None))
    return replace(step, rate=build_rate(state), faults=tuple(faults.items()), notes=notes)


def _full_step(state: RunState, now: float) -> Step:
    """The boards the quick pass left, each from what earlier steps proved and found
    (:func:`~solver.run.planning.full_step`); those its journal has done are not
    searched again, except what ``--retry`` names, in its order.  Under a budget with
    no ``--time-limit`` the limit is planned once and kept across sittings (a mark)."""
    o, best, faults = state.opts, state.best, {}
    rest = [r for r in state.records if r.index not in state.final]
    done = {r.index: state.journal_full[r.index] for r in rest if r.index in state.journal_full}
    # each board judged by what stands of it, its earlier steps' answers and bounds with
    # the full pass's (an answer step's answer as long as the full pass's bound is proven)
    stands = {i: better(best[i], out) if i in best else out for i, out in done.items()}
    retry = o.retry
    again = {
        i: out
        for i, out in stands.items()
        if retry in ("unproven", "closest")
        and not out.proven
        or retry == "unanswered"
        and out.status in ("limit", "error")
    }
    if again:
        rest.sort(key=lambda r: retry_order(again.get(r.index), retry == "closest", state.tries.get(r.index, 0)))
    todo = [r for r in rest if r.index not in done or r.index in again]
    plans = full_builds(state, todo, now, faults)  # the wall-free cuts first: each board's order is its layout's cost
    rate, time_limit, marks = build_rate(state), o.time_limit, ()
    if time_limit is None:
        time_limit = state.marks.get("limit")  # planned in an earlier sitting
    budget = state.budget
    if time_limit is None and budget.deadline is not None:
        building = sum(p.entries for p in plans) / rate  # thread-seconds the builds take from the slots
        time_limit = full_pass_limit(budget.deadline, todo, state.slots, now, building, reserve=budget.reserve)
        marks = (("limit", time_limit),)
    if time_limit is None:
        time_limit = DEFAULT_TIME_LIMIT
    merged = {**best, **stands}
    known = {r.index: k for r in rest if (k := known_for_full_pass(merged.get(r.index))) is not None}
    step = full_step(rest, again, plans, known, budget, time_limit, o.node_limit, o.fallback)
    return replace(step, rate=rate, marks=marks, faults=tuple(faults.items()))


def _round_step(state: RunState, now: float) -> Step | None:
    """The next round on the full pass's unproven boards while the budget lasts
    (:func:`~solver.run.planning.round_step`; ``"auto"``: twice the running time at the
    end of the full pass, the ``passes`` mark): round k at 2^k limits, the cheapest forecast
    proof first, with larger layout partitions where their builds pay.  A round with no
    board to start is passed over (its line goes with the next round's notes)."""
    last_step, last_result = state.ran[-1]
    if last_result.interrupted or last_step.last:
        return None
    (full, _), *_ = state.steps_of("full")
    o, budget = state.opts, state.budget
    passes = state.marks.get("passes")  # the running time at the end of the full pass (the loop's mark)
    if o.budget == AUTO_BUDGET and passes is not None:
        budget = Budget(deadline_of(state.spans, 2 * passes), reserve_for(2 * passes))
    k, notes = last_step.number, []
    while budget.deadline is not None:
        k += 1
        step, waiting = round_step(k, full.boards, state.final, full.time_limit, budget, now, o.fallback, o.node_limit)
        if step is None:
            return None
        notes.append(
            f"round {k}: {plural(len(step.boards), 'board')} at {'up to ' if step.last else ''}{step.limit:.4g} s, "
            f"{waiting} waiting for a longer limit"
        )
        if step.boards:
            faults: dict = {}
            plans = round_builds(state, step, faults)
            return replace(step, plans=plans, rate=build_rate(state), faults=tuple(faults.items()), notes=tuple(notes))
        if step.last:
            return None
    return None


def _boards_of(plans) -> set[int]:
    """The indices of the boards ``plans`` serve (:class:`~solver.run.plans.Plan`), each once."""
    return {r.index for p in plans for r in p.records}
