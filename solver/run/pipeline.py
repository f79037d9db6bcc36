"""``slidepdb run``: a whole problem file from one command, as planned steps on one clock.

The run is one loop (:meth:`Run.go`, :meth:`Run.steps`)::

    while (step := next_step(run.state(), clock.now())) is not None:   # pure planning
        run.apply(step)                  # its marks, faults and notes kept and told
        result = run.run_step(step)      # the one executor: solver.run.batch.run_batch
        run.record(step, result)         # what it gave kept: final, best, the summary's rows

    steps:  answer 1..6 -> shorten 1..3 -> quick pass -> full pass -> round 1..k

A :class:`~solver.run.steps.Step` is a value: its boards in order, the limit a board (a
number, or a rule its executor applies at the ``now`` each board starts), the builds
they wait on, the fallback or not, its last start.  The planning is one pure function
of a state value (:func:`solver.run.next_step.next_step`); this module alone reads the
journal, the database folder and the sittings into that state, writes the sittings,
runs what it plans and keeps what it gave.  Under a budget no board starts once it
could end past it (its step's last start: :data:`~solver.run.steps.QUICK_SPAN` or
:data:`~solver.run.steps.BOARD_SPAN` limits and the tuning's ``reserve`` before the
deadline); a board no step started stays in the result, unanswered
(:meth:`Run.account_for_every_board`).  Every reading of the time is the run's clock
(``RunOptions.clock``).  Every step journals its boards as they end, in one journal
beside the answer file (``OUT.progress.jsonl``, each line naming its step), and builds
publish atomically, so a killed run goes on with ``resume``.  What each step does for
users: ``docs/devquiz.md`` ("slidepdb run in detail").
"""

from __future__ import annotations

import logging
from dataclasses import replace

from ..api import check_record
from ..outcome import Outcome, better
from ..tuning import tuning
from .answer_pass import BUILD_START, unanswered
from .batch import BatchOptions, run_batch, write_answers
from .builds import AUTO_DISK, Builds, auto_disk_limit, build_memory_cap, folder_names
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
from .next_step import RunState, answers_first, next_step, wants_journal
from .options import AUTO_BUDGET, RunOptions, RunResult
from .outputs import write_each
from .planning import NOT_STARTED, Budget
from .plans import boards_served, settled
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
        self.told: set[str] = set()  # the sizes of faults logged
        self.ran: list = []  # (step, what it gave) of each step this sitting ran

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

    def state(self) -> RunState:
        """What the planning knows now (:class:`~solver.run.next_step.RunState`): the
        loop reads the database folder, the sittings and, where the full pass is next,
        its journal into it."""
        o, spans, marks = self.opts, self.sittings.frozen(), dict(self.sittings.marks)
        state = RunState(
            tuple(self.records),
            o,
            self.slots,
            self.budget,
            tuning().build_rate,
            spans,
            marks,
            folder_names(o.db_dir),
            dict(self.best),
            dict(self.final),
            tuple(self.ran),
        )
        if not wants_journal(state):
            return state
        journal = self.files.journal
        return replace(
            state,
            journal_full=read_journal(journal, self.records, of="full"),
            tries=journal_attempts(journal, self.records, of="full"),
        )

    def steps(self):
        """The run's steps, each planned (:func:`~solver.run.next_step.next_step`) as the
        one before has been run and recorded, and what each says besides its boards
        applied (:meth:`apply`).  A resumed sitting that does not run the answer pass
        (no budget now, ``--no-fallback`` or ``--proofs-first``) still keeps the answers
        and proofs its journal holds."""
        o, journal = self.opts, self.files.journal
        first = answers_first(o, self.budget)
        if not first and o.resume and journal.exists():
            for out in read_journal(journal, self.records, current_checksums(o.db_dir), of="answer").values():
                self.answer_seen(out)
        began = self.clock.tick()
        while (step := next_step(self.state(), self.clock.now())) is not None:
            if step.kind == "quick" and first:  # the answer pass is over: its row, and the builds' forecast
                self.answered(began)
                rate, slots = step.rate, self.slots
                self.builds.forecast = lambda entries: BUILD_START + entries / (rate * slots)
            self.apply(step)
            yield step

    def apply(self, step: Step) -> None:
        """What ``step`` says besides its boards: its marks kept for the sittings to come,
        the sizes no table can serve logged once each, its notes logged, the full pass's
        limit in the result."""
        for name, value in step.marks:
            self.sittings.mark(name, value)
        for size, why in step.faults:
            if size not in self.told:
                self.told.add(size)
                log.warning("%s boards go on without tables: %s", size, why)
        for note in step.notes:
            log.warning("%s", note)
        if step.kind == "full":
            self.res.full_limit = step.time_limit

    def answered(self, began: float) -> None:
        """The answer pass's row of the summary: boards, answered, proven, seconds, steps."""
        order = self.records
        answered = sum(1 for r in order if self.best.get(r.index) and self.best[r.index].status == "solved")
        proven = sum(1 for x in self.best.values() if x.proven)
        steps = sum(1 for s, _ in self.ran if s.kind in ("answer", "shorten"))
        self.res.answer = (len(order), answered, proven, self.clock.tick() - began, steps)

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
        """What ``step`` gave, kept (each outcome was kept as it came: ``run_step``): the
        result's rows for the summary, the final outcomes of the full pass and the
        rounds; under ``--budget auto``, the running time at the end of the full
        pass (a mark: the rounds' budget is twice it, in every sitting after; a
        retry's full pass counts anew; an interrupted one leaves it to the sitting
        that ends it). An interrupted answer, shortening or quick step ends the
        run's steps."""
        res, final = self.res, self.final
        self.ran.append((step, result))
        if step.kind == "full" and self.opts.budget == AUTO_BUDGET and not result.interrupted:
            if "passes" not in self.sittings.marks or step.retry:
                self.sittings.mark("passes", self.sittings.running(self.clock.now()))
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


def _not_started(rec) -> Outcome:
    """The outcome of a board that no pass started: rejected if checking rejects it,
    else ``limit`` with no answer.  The budget is spent by then, so a board whose
    verdict needs its walk group is left undecided (up to a second a board)."""
    out = check_record(rec, group=False)
    if out.status != "valid":
        return out
    out.status, out.error, out.optimal = "limit", NOT_STARTED, False
    return out
