"""``slidepdb run``: a whole problem file from one command, as planned steps on one clock.

The run is one loop (:meth:`Run.go`)::

    for step in run.steps():            # planned from the time now and what is known
        result = run.run_step(step)     # the one executor: solver.run.batch.run_batch
        run.record(step, result)        # what it gave kept: final, best, the summary's rows

    steps:  answer 1..6 -> shorten 1..3 -> quick pass -> full pass -> round 1..k
            (the answer and shortening steps under a budget in seconds, with the fallback;
            the rounds under a budget; each step's boards wait on the builds it plans)

A :class:`~solver.run.steps.Step` is a value: its boards in order, the limit a board,
the builds they wait on, the fallback or not, its last start.  The planners are pure
(:mod:`solver.run.planning`, :mod:`solver.run.answer_pass`); this module reads the
journals and the database folder for them, runs what they plan and keeps what it gave.
Under a budget no board starts once it could end past it (its step's last start:
:data:`~solver.run.steps.QUICK_SPAN` or :data:`~solver.run.steps.BOARD_SPAN` limits and
the tuning's ``reserve`` before the deadline); a board no step started stays
in the result, unanswered (:meth:`Run.account_for_every_board`).  Every reading of the
time is the run's clock (``RunOptions.clock``).  Every step journals its boards as they
end, in one journal beside the answer file (``OUT.progress.jsonl``, each line naming its
step), and builds publish atomically, so a killed run goes on with ``resume``.  What each
step does for users: ``docs/devquiz.md`` ("slidepdb run in detail").
"""

from __future__ import annotations

import logging
from dataclasses import replace

from pdb_builder.words import plural

from ..api import check_record
from ..outcome import Outcome, better
from ..tuning import tuning
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
    unanswered,
)
from .batch import BatchOptions, run_batch, write_answers
from .builds import (
    AUTO_DISK,
    Builds,
    auto_disk_limit,
    boards_served,
    build_memory_cap,
    plan_first,
    plan_layouts,
    plan_wall_free_cuts,
    settled,
)
from .cluster import cluster_threads
from .files import RunFiles, owning
from .journal import (
    current_checksums,
    fold_earlier_form,
    input_key,
    journal_attempts,
    read_journal,
    refuse_foreign_answers,
    refuse_other_input,
    refuse_unless_resume,
)
from .options import AUTO_BUDGET, RunOptions, RunResult
from .outputs import write_each
from .planning import (
    DEFAULT_TIME_LIMIT,
    MAX_LAYOUT_PARTITIONS,
    NOT_STARTED,
    Budget,
    full_pass_limit,
    full_step,
    quick_step,
    reserve_for,
    retry_order,
    round_step,
    with_filled_cuts,
)
from .sittings import Sittings
from .steps import BatchResult, Step
from .timeline import write_timeline

log = logging.getLogger("slidepdb.run")


def journalled_outcomes(records, files: RunFiles) -> dict[int, Outcome]:
    """What the journal of an unfinished run holds: each board's outcomes of every pass
    taken together (:func:`~solver.outcome.better`: the best answer, the highest lower
    bound; an answer step's answer as long as a later search's bound is proven)."""
    out: dict[int, Outcome] = {}
    for of in ("answer", "quick", "full"):
        for i, o in read_journal(files.journal, records, of=of).items():
            out[i] = better(out[i], o) if i in out else o
    return out


def run_pipeline(records, out_path, options: RunOptions | None = None, /, **changes) -> RunResult:
    """The loop of the module docstring for ``records``, answers to ``out_path``, as
    ``options`` say (:class:`RunOptions`; ``changes``: fields of it to change)."""
    with owning(out_path):  # one run of an answer file at a time, from its refusals to its last write
        return Run(records, RunFiles(out_path), replace(options or RunOptions(), **changes)).go()


class Run:
    """One sitting of a run: its files, its sittings (the budget across them), its
    options and builds, what is known of each board (``best``, ``final``), and the
    result it fills in."""

    def __init__(self, records, files: RunFiles, opts: RunOptions):
        self.records, self.files, self.opts = records, files, opts
        for j in files.journals():
            refuse_unless_resume(j, opts.resume)
        refuse_foreign_answers(files.answers, files.journals(), records)
        self.input = input_key(records)  # the journal's first line
        if opts.resume:  # before any sitting is counted or file written
            refuse_other_input(files.journals(), records, self.input, files.answers)
            fold_earlier_form(files.journal, files.earlier_journals)  # a journal of the three-file form
        self.res = RunResult()
        self.clock = opts.clock  # every reading of the time (solver.run.clock)
        self.sittings = Sittings.begin(files.sittings, opts.resume, self.clock)
        self.res.earlier = (len(self.sittings.spans) - 1, self.sittings.spent_before)
        budget = opts.budget
        seconds = budget not in (None, AUTO_BUDGET)
        self.budget = Budget.of(self.sittings.deadline(budget) if seconds else None, budget if seconds else None)
        disk_limit = opts.disk_limit
        if disk_limit == AUTO_DISK:  # worked out once, kept across sittings
            marks = self.sittings.marks
            disk_limit = int(marks.get("disk") or self.sittings.mark("disk", auto_disk_limit(opts.db_dir)))
        self.builds = Builds(
            self.res, opts.db_dir, disk_limit, self.sittings, opts.on_build, files.built, self.nothing_left, self.clock
        )
        self.final: dict[int, Outcome] = {}  # each board's outcome that stands
        self.best: dict[int, Outcome] = {}  # the best each board has had in any step (solver.outcome.better)
        self.served = boards_served(records)  # a shape key -> the boards its tables serve
        self.slots = opts.workers if opts.scheduler is None else cluster_threads(opts.scheduler)
        self.rate = tuning().build_rate  # entries a build makes a thread-second, scaled as the answer pass measures
        self.faults: dict[str, str] = {}  # size -> why no table of it can be built (solver.run.builds._plan)
        self.told: set[str] = set()  # the sizes of faults logged
        self.rest: list = []  # the full pass's boards, which the rounds take again
        self.retried = False  # whether the full pass solved journalled boards again (--retry)

    # -- what is known ----------------------------------------------------------------------

    def keep(self, o: Outcome) -> Outcome:
        """``o`` held with the board's earlier outcomes: the better one (which stands)."""
        was = self.best.get(o.index)
        self.best[o.index] = o if was is None or was is o else better(was, o)
        return self.best[o.index]

    def nothing_left(self, key: str) -> bool:
        """Whether every board that tables of shape ``key`` serve is settled (proven, or
        rejected): their tables have nothing left to give this run."""
        return all(settled(self.best.get(i)) for i in self.served.get(key, ()))

    def seen(self, o: Outcome) -> Outcome:
        """A final outcome: kept with the board's earlier ones, the sitting touched, the
        caller told of what stands (returned)."""
        o = self.keep(o)
        self.sittings.touch()
        if self.opts.on_outcome:
            self.opts.on_outcome(o)
        return o

    def answer_seen(self, out: Outcome) -> None:
        """An answer or shortening step's outcome: told; final where the board is proven
        or rejected."""
        out = self.seen(out)
        if out.status != "limit" and (out.proven or not out.solved):
            self.final[out.index] = out

    def quick_seen(self, out: Outcome) -> None:
        """A quick-pass outcome: final where the board is decided (proven or rejected),
        also where the answer an earlier step found is as long as the lower bound this
        search proved (such a board goes on to no build and no later step); else kept."""
        kept = self.keep(out)
        if out.status != "limit" or kept.proven:
            self.final[out.index] = self.seen(kept)
        else:
            self.sittings.touch()

    # -- the loop ---------------------------------------------------------------------------

    def go(self) -> RunResult:
        res = self.res
        try:
            for step in self.steps():
                self.record(step, self.run_step(step))
        except KeyboardInterrupt:
            res.interrupted = True
        if not res.outcomes:  # interrupted early: whatever the journals hold
            res.outcomes = journalled_outcomes(self.records, self.files)
        res.outcomes.update(self.best)  # what stands of each board the steps saw (the answer steps' answers too)
        if not res.interrupted:
            self.account_for_every_board()
        failed, files = res.failed_outputs, self.files
        res.left_out = (
            write_each(
                failed,
                "--out",
                files.answers,
                lambda: write_answers(files.answers, self.records, res.outcomes, self.opts.limits),
            )
            or set()
        )
        write_each(failed, "the sittings", files.sittings, lambda: self.sittings.touch(force=True))
        res.timeline = write_each(failed, "the timeline", files.timeline, lambda: write_timeline(self.records, files))
        return res

    def steps(self):
        """The run's steps, each planned as the one before has been run and recorded:
        the answer pass's, the quick pass, the full pass, the rounds."""
        yield from self.answer_steps_planned()
        yield self.quick_pass()
        yield self.full_pass()
        if not self.res.interrupted:
            yield from self.rounds()

    def run_step(self, step: Step) -> BatchResult:
        """The one executor: ``step``'s boards solved (:func:`~solver.run.batch.run_batch`),
        the builds of its plans as jobs its boards wait on; the run's own fields of
        :class:`~solver.run.batch.BatchOptions` set here.  Past the step's last start no
        board starts and the builds still running are stopped."""
        o = self.opts
        seen = {"answer": self.answer_seen, "shorten": self.answer_seen, "quick": self.quick_seen}
        run = BatchOptions(
            db_dir=o.db_dir,
            workers=o.workers,
            scheduler=o.scheduler,
            resume=True,
            input=self.input,
            clock=self.clock,
            journal=self.files.journal,
            step=step.tag,
            job_memory=build_memory_cap(o.memory_limit),
            go_on=True,  # a table that cannot be read: its boards go on without it
            jobs=self.builds.jobs(step.plans),
            # boards with answers wait for their builds to the last start
            patient=[r.index for r in step.boards if not unanswered(self.best.get(r.index))],
            time_limit=step.time_limit,
            node_limit=step.node_limit,
            fallback=step.fallback,
            retry=list(step.retry),
            last_start=step.last_start,
            known=step.known,
            on_outcome=seen.get(step.kind, self.seen),
        )
        return run_batch(step.boards, run)

    def record(self, step: Step, result: BatchResult) -> None:
        """What ``step`` gave, kept (each outcome was kept as it came: ``run_step``):
        the result's rows for the summary, the final outcomes of the full pass and the
        rounds.  An interrupted answer, shortening or quick step ends the run's steps."""
        res, final = self.res, self.final
        if step.kind == "quick":
            res.quick = result
        elif step.kind == "full":
            res.full = result
            final.update({i: self.best.get(i, x) for i, x in result.outcomes.items()})
            res.outcomes = final
        elif step.kind == "round":
            tried = [x for x in result.outcomes.values() if (x.ended or 0) >= result.began]  # the rest never started
            gained = sum(x.proven for x in tried)  # all were unproven
            res.rounds.append((step.number, step.seconds, len(tried), gained, result.seconds))
            final.update({i: self.best.get(i, x) for i, x in result.outcomes.items()})
        if step.kind in ("full", "round"):
            res.interrupted = result.interrupted
        elif result.interrupted:
            raise KeyboardInterrupt

    def account_for_every_board(self) -> None:
        """Every board in the result, also one that no step started before the budget's
        last start: its quick pass's outcome (the full pass never reached it), or, never
        started at all, what checking it says (invalid, unsolvable) or a ``limit``
        outcome that says so; the report and summary count it unanswered."""
        for rec in self.records:
            if rec.index not in self.res.outcomes:
                self.res.outcomes[rec.index] = _not_started(rec)

    # -- the builds the steps wait on --------------------------------------------------------

    def tell_faults(self) -> None:
        """Log once each size that the planners found no table could serve: its boards
        go on without tables (a run never stops for them)."""
        for size, why in self.faults.items():
            if size not in self.told:
                self.told.add(size)
                log.warning("%s boards go on without tables: %s", size, why)

    def build_seconds(self, entries: int) -> float:
        """What a build of ``entries`` is expected to take on the slots, at the rate this
        machine shows now, and :data:`~solver.run.answer_pass.BUILD_START` to start and publish."""
        return BUILD_START + entries / (self.rate * self.slots)

    def build_room(self) -> float | None:
        """Under a budget in seconds, the entries builds can make in
        :data:`~solver.run.answer_pass.BUILD_SHARE` of the time left (None: no budget); 0
        where that share is shorter than a build's start
        (:data:`~solver.run.answer_pass.BUILD_START`): then nothing is planned (planning a
        file's layouts takes seconds)."""
        left = self.budget.left(self.clock.now())
        if left is None:
            return None
        share = BUILD_SHARE * left
        return entries_in(share, self.rate, self.slots) if share > BUILD_START else 0.0

    def quick_builds(self, todo) -> tuple[list, set[int]]:
        """The quick pass's builds for ``todo``: wall-free databases, one per size (and
        goal) under ``memory_limit``, or the exact layouts' where every board of a size
        is walled (:func:`~solver.run.builds.plan_first`), smaller where the largest would
        not end in time; and the boards whose tables no build brings in time."""
        o = self.opts
        plans, lacking, room = [], set(), self.build_room()
        if not o.build or room == 0:
            return plans, lacking

        def plan_of(recs, memory, faults=None):  # (the smaller ones tried: a BoardError says they cannot be)
            return plan_first(recs, o.db_dir, memory, min(memory, o.layout_memory), o.layout_count, faults)

        plans = plan_of(todo, o.memory_limit, self.faults)
        self.tell_faults()
        lacking = _boards_of(plans)  # boards of shapes without tables
        if room is not None and lacking:  # smaller patterns where the largest would not end in time
            plans = shrunk_plans(plans, plan_of, room, o.memory_limit, o.layout_memory >> 3)
            served = _boards_of(plans)  # (a board two plans serve: once)
            log.warning(
                "quick pass: %s planned (%s entries) for %s; %s without tables in the time left",
                plural(sum(len(p.partitions) for p in plans), "build"),
                f"{sum(p.entries for p in plans):,}",
                plural(len(served), "board"),
                plural(len(lacking - served), "board"),
            )
        return plans, lacking

    def full_builds(self, todo) -> list:
        """The full pass's builds for ``todo``: ``wall_free_count`` wall-free cuts of each
        size and, for each walled board, its layout's databases (``layout_memory`` a
        pattern BFS, ``layout_count`` cuts) while the folder stays under ``disk_limit``;
        under a budget those that end in time, the cheapest a board first."""
        o, room = self.opts, self.build_room()
        if not o.build or room == 0:
            return []
        plans = plan_wall_free_cuts(todo, o.db_dir, o.layout_memory, o.wall_free_count, self.faults)
        plans += plan_layouts(todo, o.db_dir, o.layout_memory, o.layout_count, self.faults)
        self.tell_faults()
        if room is not None:
            plans = plans_within(plans, self.build_room())  # (what is left after the planning's seconds)
        return plans

    def round_builds(self, step: Step) -> list:
        """Round ``step``'s builds: its boards' layouts with larger partitions (one more
        cut and twice the memory a round, and, for the boards whose forecast proof is
        over the round's limit, the cut that fills the memory where the even ones do
        not) where a build takes no longer than the searches of the boards it serves at
        the round's limit (:func:`~solver.run.planning.with_filled_cuts`)."""
        o, k = self.opts, step.number
        if not o.build:
            return []
        count = min(MAX_LAYOUT_PARTITIONS, o.layout_count + k)
        memory = min(o.memory_limit, o.layout_memory << k)
        plans = plan_layouts(step.boards, o.db_dir, memory, count, self.faults)
        over = set(step.over)
        layouts = {r.board.shape.key for r in step.boards if r.index in over}
        same = [r for r in step.boards if r.board.shape.key in layouts]  # (all of a layout's boards wait)
        filled = plan_layouts(same, o.db_dir, memory, count, self.faults, fill=True)
        self.tell_faults()
        return with_filled_cuts(plans, filled, step.limit, self.rate)

    # -- the steps ---------------------------------------------------------------------------

    def answer_steps_planned(self):
        """Under a budget in seconds (with the fallback): every board an answer before any
        build, smallest boards first, each a short optimal search on the tables there are
        and then the fallback (:func:`~solver.run.answer_pass.answer_step`); the boards
        left unanswered again with longer limits; then, where the answers are over the
        file's move limits, the answers longest over their lower bounds shortened
        (:func:`~solver.run.answer_pass.shorten_step`).  Proven boards (and rejected
        ones) are final; the others go on to the quick pass with their answers.  Then
        the builds' rate is scaled to the speed the boards had.  A resumed sitting that
        does not run the pass (no budget now, ``--no-fallback`` or ``--proofs-first``)
        still keeps the answers and proofs its journal holds."""
        o, journal = self.opts, self.files.journal
        if self.budget.deadline is None or not o.fallback or not o.answers_first:
            if o.resume and journal.exists():  # a sitting without the pass keeps its answers
                for out in read_journal(journal, self.records, current_checksums(o.db_dir), of="answer").values():
                    self.answer_seen(out)
            return
        order = answer_order(self.records)
        todo, share, grown = order, ANSWER_SHARE, {}
        began, steps = self.clock.tick(), 0
        for number in range(1, ANSWER_STEPS + 1):
            now = self.clock.now()
            step = answer_step(number, todo, grown, share, self.best, self.budget, now, self.slots, o.node_limit)
            if step is None:
                break
            yield step
            steps += 1
            todo, grown = answer_again(order, self.best, step.time_limit.given, grown)
            if not todo:
                break
            share = LATE_SHARE
        tried: set[int] = set()
        for number in range(1, SHORTEN_STEPS + 1):
            step = shorten_step(number, order, self.best, tried, o.limits, self.budget, self.clock.now(), o.node_limit)
            if step is None:
                break
            yield step
            steps += 1
            tried.update(step.retry)
        answered = sum(1 for r in order if self.best.get(r.index) and self.best[r.index].status == "solved")
        proven = sum(1 for x in self.best.values() if x.proven)
        self.res.answer = (len(order), answered, proven, self.clock.tick() - began, steps)
        self.rate *= machine_share(self.best.values())  # the build rate, at the speed the boards had
        self.builds.forecast = self.build_seconds

    def quick_pass(self) -> Step:
        """Every board not final yet, each size's as soon as its wall-free database is
        built (:func:`~solver.run.planning.quick_step`): proven boards are final; rejected
        ones (invalid, unsolvable) too."""
        o = self.opts
        todo = [r for r in self.records if r.index not in self.final]
        plans, lacking = self.quick_builds(todo)
        caps = [x for x in (o.node_limit, o.quick_node_limit) if x is not None]
        return quick_step(todo, plans, lacking, self.best, self.budget, o.quick_limit, min(caps, default=None))

    def full_pass(self) -> Step:
        """The boards the quick pass left, with the full pass's limit and the fallback,
        each from what earlier steps proved and found; the layouts build in the workers'
        slots beside the boards that need no build, each layout's boards go to the
        solvers as soon as its database is published (:func:`~solver.run.planning.full_step`).
        ``--retry``: the journalled boards it names solved again, in its order.  Under a
        budget with no ``--time-limit`` the limit is planned once and kept across sittings."""
        o, final = self.opts, self.final
        rest = [r for r in self.records if r.index not in final]
        done_full = read_journal(self.files.journal, rest, of="full")
        # each board judged by what stands of it, its earlier steps' answers and bounds with
        # the full pass's (an answer step's answer as long as the full pass's bound is proven)
        stands = {i: self.keep(out) for i, out in done_full.items()}
        again = {
            i: out
            for i, out in stands.items()
            if o.retry in ("unproven", "closest")
            and not out.proven
            or o.retry == "unanswered"
            and out.status in ("limit", "error")
        }
        for i in again:
            del done_full[i]
        if again:
            tries = journal_attempts(self.files.journal, rest, of="full")
            rest.sort(key=lambda r: retry_order(again.get(r.index), o.retry == "closest", tries[r.index]))
        todo = [r for r in rest if r.index not in done_full]
        plans = self.full_builds(todo)  # the wall-free cuts first: each board's order is its layout's cost
        time_limit = o.time_limit
        if time_limit is None:
            time_limit = self.sittings.marks.get("limit")  # planned in an earlier sitting
        budget = self.budget
        if time_limit is None and budget.deadline is not None:
            building = sum(p.entries for p in plans) / self.rate  # thread-seconds the builds take from the slots
            now = self.clock.now()
            planned = full_pass_limit(budget.deadline, todo, self.slots, now, building, reserve=budget.reserve)
            time_limit = self.sittings.mark("limit", planned)
        if time_limit is None:
            time_limit = DEFAULT_TIME_LIMIT
        self.res.full_limit = time_limit
        known = {r.index: k for r in rest if (k := known_for_full_pass(self.best.get(r.index))) is not None}
        step = full_step(rest, again, plans, known, budget, time_limit, o.node_limit, o.fallback)
        self.rest, self.retried = step.boards, bool(again)  # the rounds take its boards in its order
        return step

    def rounds(self):
        """Under a budget, rounds on the full pass's unproven boards until it is spent
        (:func:`~solver.run.planning.round_step`; ``"auto"``: twice the time to the end of
        the full pass): round k at 2^k limits, the cheapest forecast proof first
        (:mod:`solver.run.forecast`), with larger layout partitions where their builds pay."""
        o, res = self.opts, self.res
        if o.budget == AUTO_BUDGET:
            passes = self.sittings.marks.get("passes")
            if passes is None or self.retried:  # kept from the sitting that ended the full pass
                passes = self.sittings.mark("passes", self.sittings.running(self.clock.now()))
            self.budget = Budget(self.sittings.deadline(2 * passes), reserve_for(2 * passes))
        k = 0
        while self.budget.deadline is not None and not res.interrupted:
            k += 1
            now = self.clock.now()
            step, waiting = round_step(
                k, self.rest, self.final, res.full_limit, self.budget, now, o.fallback, o.node_limit
            )
            if step is None:
                break
            log.warning(
                "round %d: %s at %s%.4g s, %d waiting for a longer limit",
                k,
                plural(len(step.boards), "board"),
                "up to " if step.last else "",
                step.limit,
                waiting,
            )
            if step.boards:
                yield replace(step, plans=self.round_builds(step))
            if step.last:
                break


def _boards_of(plans) -> set[int]:
    """The indices of the boards ``plans`` serve (:class:`~solver.run.builds.Plan`), each once."""
    return {r.index for p in plans for r in p.records}


def _not_started(rec) -> Outcome:
    """The outcome of a board that no pass started: rejected if checking rejects it,
    else ``limit`` with no answer.  The budget is spent by then, so a board whose
    verdict needs its walk group is left undecided (up to a second a board)."""
    out = check_record(rec, group=False)
    if out.status != "valid":
        return out
    out.status, out.error, out.optimal = "limit", NOT_STARTED, False
    return out
