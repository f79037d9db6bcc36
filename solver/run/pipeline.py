"""``slidepdb run``: a whole problem file from one command (:class:`Run`, one sitting).

The steps, as ``docs/devquiz.md`` ("slidepdb run in detail") tells them to users:

0. **Answers first** (a budget in seconds, the fallback on, ``answers_first``): every
   board an answer before any build, then answers over the file's move limits
   shortened (:func:`solver.run.answer_pass.answer_pass`); builds are then sized to the
   time left at the speed it measured.
1. **Wall-free databases**, one per board size (and goal) under ``memory_limit``, or
   the exact layouts' where every board of a size is walled (:func:`~solver.run.builds.plan_first`).
2. **Quick pass** (:meth:`Run.quick_pass`): optimal search only, ``quick_limit`` a
   board, alongside step 1: a size's boards start as soon as its database is published.
3. **Exact layouts where they pay**: for each walled board the quick pass left, its
   layout's databases (``layout_memory`` a pattern BFS, ``layout_count`` cuts) while
   the folder stays under ``disk_limit``, and ``wall_free_count`` wall-free cuts of its
   size (:func:`~solver.run.builds.plan_layouts`, :func:`~solver.run.builds.plan_wall_free_cuts`).
4. **Full pass** (:meth:`Run.full_pass`): those boards with ``time_limit`` and the
   fallback, each from the lower bound the quick pass proved; under a budget its limit
   lets it take :data:`~solver.run.options.FULL_PASS_SHARE` of the time left (planned once).
5. **Rounds** within the budget (:meth:`Run.rounds`; ``"auto"``: twice the time to the
   end of the full pass): the unproven boards again, round k at 2^k limits, the
   cheapest forecast proof first (:mod:`solver.run.forecast`), with larger layout
   partitions where their builds pay; a board with an answer searches for the proof alone.
6. The answer file (never over the file's move limits) and the report.

Under a budget no board starts once it could end past it (:data:`~solver.run.batch.QUICK_SPAN`
or :data:`~solver.run.batch.BOARD_SPAN` limits and :data:`~solver.run.options.RESERVE`);
boards waiting on builds stop waiting while they can still all start, and a board that
no pass started stays in the result, unanswered (:meth:`Run.account_for_every_board`).
Builds and searches share the workers' slots (:class:`~solver.run.feed.Feed`,
:class:`~solver.run.lanes.Lanes`, :class:`~solver.run.cluster.WorkerLanes` on dask).
Each pass keeps a journal beside the answer file (``OUT.answer.jsonl``,
``OUT.quick.jsonl``, ``OUT.progress.jsonl``) and builds publish atomically, so a killed
run continues with ``resume``; ``retry`` solves a finished run's unproven boards again.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from pdb_builder.words import plural

from ..api import check_record
from ..outcome import Outcome, better
from .answer_pass import (
    BUILD_SHARE,
    BUILD_START,
    answer_pass,
    entries_in,
    known_for_full_pass,
    plans_within,
    shrunk_plans,
    unanswered,
)
from .batch import BOARD_SPAN, QUICK_SPAN, BatchOptions, run_batch, write_answers
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
from .files import RunFiles
from .forecast import proof_seconds, typical_growth
from .journal import input_key, journal_attempts, read_journal, refuse_other_input, refuse_unless_resume
from .options import (
    AUTO_BUDGET,
    BUILD_RATE,
    DEFAULT_TIME_LIMIT,
    MAX_LAYOUT_PARTITIONS,
    NOT_STARTED,
    RESERVE,
    ROUND_GROWTH,
    RunOptions,
    RunResult,
    UntilEnd,
    full_pass_limit,
    known_of,
    reserve_for,
    retry_order,
    round_boards,
    round_limit,
    tried_limit,
    worth_waiting_for,
)
from .outputs import write_each
from .sittings import Sittings
from .timeline import write_timeline

log = logging.getLogger("slidepdb.run")


def journalled_outcomes(records, files: RunFiles) -> dict[int, Outcome]:
    """What the journals of an unfinished run hold: each board's outcomes of every pass
    taken together (:func:`~solver.outcome.better`: the best answer, the highest lower
    bound; an answer pass's answer as long as a later search's bound is proven)."""
    out: dict[int, Outcome] = {}
    for journal in (files.answer_journal, files.quick_journal, files.journal):
        for i, o in read_journal(journal, records).items():
            out[i] = better(out[i], o) if i in out else o
    return out


def run_pipeline(records, out_path, options: RunOptions | None = None, /, **changes) -> RunResult:
    """Steps 1-5 of the module docstring for ``records``, answers to ``out_path``, as
    ``options`` say (:class:`RunOptions`; ``changes``: fields of it to change)."""
    return Run(records, RunFiles(out_path), replace(options or RunOptions(), **changes)).go()


class Run:
    """One sitting of a run: its files, its sittings (the budget across them), its
    options and builds, and the result it fills in, shared by the passes below."""

    def __init__(self, records, files: RunFiles, opts: RunOptions):
        self.records, self.files, self.opts = records, files, opts
        journals = (files.answer_journal, files.quick_journal, files.journal)
        for j in journals:
            refuse_unless_resume(j, opts.resume)
        self.input = input_key(records)  # the first line of each journal
        if opts.resume:  # before any sitting is counted or file written
            refuse_other_input([j for j in journals if j.exists()], records, self.input, files.answers)
        self.res = RunResult()
        self.clock = opts.clock  # every reading of the time (solver.run.clock)
        self.sittings = Sittings.begin(files.sittings, opts.resume, self.clock)
        self.res.earlier = (len(self.sittings.spans) - 1, self.sittings.spent_before)
        budget = opts.budget
        self.deadline = None if budget in (None, AUTO_BUDGET) else self.sittings.deadline(budget)
        self.reserve = RESERVE if budget in (None, AUTO_BUDGET) else reserve_for(budget)
        disk_limit = opts.disk_limit
        if disk_limit == AUTO_DISK:  # worked out once, kept across sittings
            marks = self.sittings.marks
            disk_limit = int(marks.get("disk") or self.sittings.mark("disk", auto_disk_limit(opts.db_dir)))
        self.builds = Builds(
            self.res, opts.db_dir, disk_limit, self.sittings, opts.on_build, files.built, self.nothing_left, self.clock
        )
        self.final: dict[int, Outcome] = {}  # each board's outcome that stands
        self.best: dict[int, Outcome] = {}  # the best each board has had in any pass (solver.outcome.better)
        self.served = boards_served(records)  # a shape key -> the boards its tables serve
        self.slots = opts.workers if opts.scheduler is None else cluster_threads(opts.scheduler)
        self.rate = BUILD_RATE  # entries a build makes a thread-second, scaled by what the answer pass measures
        self.faults: dict[str, str] = {}  # size -> why no table of it can be built (solver.run.builds._plan)
        self.told: set[str] = set()  # the sizes of faults logged

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

    def go(self) -> RunResult:
        res = self.res
        try:
            self.answer_pass()
            self.quick_pass()
            rest, again = self.full_pass()
            if not res.interrupted:
                self.rounds(rest, bool(again))
        except KeyboardInterrupt:
            res.interrupted = True
        if not res.outcomes:  # interrupted early: whatever the journals hold
            res.outcomes = journalled_outcomes(self.records, self.files)
        res.outcomes.update(self.best)  # what stands of each board the passes saw (the answer pass's answers too)
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

    def account_for_every_board(self) -> None:
        """Every board in the result, also one that no pass started before the budget's
        last start: its quick pass's outcome (the full pass never reached it), or, never
        started at all, what checking it says (invalid, unsolvable) or a ``limit``
        outcome that says so; the report and summary count it unanswered."""
        for rec in self.records:
            if rec.index not in self.res.outcomes:
                self.res.outcomes[rec.index] = _not_started(rec)

    def last_start(self, limit: float, span: float = BOARD_SPAN) -> float | None:
        """Under a budget in seconds: when a board given ``limit`` seconds (``span``
        limits at most) must have started to end before the budget does."""
        return None if self.deadline is None else self.deadline - self.reserve - span * limit

    def batch(self, recs, plans=(), **changes):
        """One batch of the run (:func:`~solver.run.batch.run_batch`), the builds of
        ``plans`` as jobs its boards wait on; ``changes``: the batch's own fields of
        :class:`~solver.run.batch.BatchOptions` (its journal, limits, fallback, retries,
        last start, what earlier passes proved and found of its boards); the run's own
        are set here.  Past ``last_start`` no board starts and the builds still running
        are stopped."""
        o = self.opts
        run = BatchOptions(
            db_dir=o.db_dir,
            workers=o.workers,
            scheduler=o.scheduler,
            resume=True,
            input=self.input,
            clock=self.clock,
            job_memory=build_memory_cap(o.memory_limit),
            go_on=True,  # a table that cannot be read: its boards go on without it
            jobs=self.builds.jobs(plans),
            # boards with answers wait for their builds to the last start
            patient=[r.index for r in recs if not unanswered(self.best.get(r.index))],
        )
        return run_batch(recs, run, **changes)

    def tell_faults(self) -> None:
        """Log once each size that the planners found no table could serve: its boards
        go on without tables (a run never stops for them)."""
        for size, why in self.faults.items():
            if size not in self.told:
                self.told.add(size)
                log.warning("%s boards go on without tables: %s", size, why)

    def answer_pass(self) -> None:
        """Step 0 of the module docstring (:func:`solver.run.answer_pass.answer_pass`)."""
        answer_pass(self)

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
        if self.deadline is None:
            return None
        share = BUILD_SHARE * (self.deadline - self.reserve - self.clock.now())
        return entries_in(share, self.rate, self.slots) if share > BUILD_START else 0.0

    def quick_pass(self) -> None:
        """Every board not final yet, each size's as soon as its wall-free database is
        built: proven boards are final; rejected ones (invalid, unsolvable) too."""
        o = self.opts
        todo = [r for r in self.records if r.index not in self.final]
        caps = [x for x in (o.node_limit, o.quick_node_limit) if x is not None]
        plans, lacking, room = [], set(), self.build_room()
        if o.build and room != 0:

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
        # the boards whose tables are there first, then the wall-free builds and then the
        # exact layouts, each the cheapest a board first (entries over the boards that wait
        # on it: the most proofs soonest; a build alone on the slots grows onto the idle
        # ones, so the largest going last leaves none idle); last the boards whose tables
        # no build brings in time (answered already: a proof on Manhattan distance alone
        # is the least likely)
        cost = {r.index: (1, p.role == "layout", p.per_board) for p in plans for r in p.records}
        order = sorted(todo, key=lambda r: cost.get(r.index, (2 if r.index in lacking else 0, 0, 0)))
        self.res.quick = self.batch(
            order,
            journal=self.files.quick_journal,
            time_limit=o.quick_limit,
            node_limit=min(caps, default=None),
            fallback=False,
            on_outcome=self.quick_seen,
            plans=plans,
            last_start=self.last_start(o.quick_limit, QUICK_SPAN),
            known=known_of({r.index: self.best[r.index] for r in todo if r.index in self.best}),
        )
        if self.res.quick.interrupted:
            raise KeyboardInterrupt

    def quick_seen(self, out: Outcome) -> None:
        """A quick-pass outcome: final where the board is decided (proven or rejected),
        also where the answer an earlier pass found is as long as the lower bound this
        search proved (such a board goes on to no build and no later pass); else kept."""
        kept = self.keep(out)
        if out.status != "limit" or kept.proven:
            self.final[out.index] = self.seen(kept)
        else:
            self.sittings.touch()

    def full_pass(self):
        """The boards the quick pass left, with the full pass's limit and the fallback;
        the layouts build in the workers' slots beside the boards that need no build,
        each layout's boards go to the solvers as soon as its database is published.
        Returns the boards (records) and those retried (index -> earlier outcome)."""
        o, res, final = self.opts, self.res, self.final
        rest = [r for r in self.records if r.index not in final]
        done_full = read_journal(self.files.journal, rest)
        # each board judged by what stands of it, its earlier passes' answers and bounds with
        # the full pass's (an answer pass's answer as long as the full pass's bound is proven)
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
            tries = journal_attempts(self.files.journal, rest)
            rest.sort(key=lambda r: retry_order(again.get(r.index), o.retry == "closest", tries[r.index]))
        todo = [r for r in rest if r.index not in done_full]
        plans, room = [], self.build_room()
        if o.build and room != 0:  # the wall-free cuts first: each board's order below is its layout's cost
            plans = plan_wall_free_cuts(todo, o.db_dir, o.layout_memory, o.wall_free_count, self.faults)
            plans += plan_layouts(todo, o.db_dir, o.layout_memory, o.layout_count, self.faults)
            self.tell_faults()
            if room is not None:  # those that end in time, the cheapest a board first
                plans = plans_within(plans, self.build_room())  # (what is left after the planning's seconds)
        if not again:  # the boards whose tables are there first, then the cheapest layout build a board
            cost = {r.index: p.per_board for p in plans for r in p.records}
            rest.sort(key=lambda r: cost.get(r.index, 0))
        time_limit = o.time_limit
        if time_limit is None:
            time_limit = self.sittings.marks.get("limit")  # planned in an earlier sitting
        if time_limit is None and self.deadline is not None:
            building = sum(p.entries for p in plans) / self.rate  # thread-seconds the builds take from the slots
            planned = full_pass_limit(self.deadline, todo, self.slots, self.clock.now(), building, reserve=self.reserve)
            time_limit = self.sittings.mark("limit", planned)
        if time_limit is None:
            time_limit = DEFAULT_TIME_LIMIT
        res.full_limit = time_limit
        res.full = self.batch(
            rest,
            journal=self.files.journal,
            time_limit=time_limit,
            node_limit=o.node_limit,
            fallback=o.fallback,
            on_outcome=self.seen,
            plans=plans,
            retry=list(again),
            last_start=self.last_start(time_limit),
            known={
                **{r.index: k for r in rest if (k := known_for_full_pass(self.best.get(r.index))) is not None},
                **known_of(again),
            },
        )
        final.update({i: self.best.get(i, x) for i, x in res.full.outcomes.items()})
        res.outcomes = final
        res.interrupted = res.full.interrupted
        return rest, again

    def rounds(self, rest, retried: bool) -> None:
        """Step 5 of the module docstring: rounds on the full pass's unproven boards
        until the budget is spent."""
        o, res, final = self.opts, self.res, self.final
        if o.budget == AUTO_BUDGET:
            passes = self.sittings.marks.get("passes")
            if passes is None or retried:  # kept from the sitting that ended the full pass
                passes = self.sittings.mark("passes", self.sittings.running(self.clock.now()))
            self.deadline = self.sittings.deadline(2 * passes)
            self.reserve = reserve_for(2 * passes)
        deadline, k, last = self.deadline, 0, False
        while deadline is not None and not res.interrupted and not last:
            k += 1
            unproven = [r for r in rest if final.get(r.index) is not None and not final[r.index].proven]
            # a board with an answer searches for the proof alone (no fallback: solve_record)
            fallback = o.fallback and any(final[r.index].status != "solved" for r in unproven)
            span = BOARD_SPAN if fallback else QUICK_SPAN
            limit, last = round_limit(res.full_limit, k, deadline, span, self.clock.now(), self.reserve)
            if not unproven:
                break
            typical = typical_growth(final[r.index] for r in unproven)
            forecast = {r.index: proof_seconds(final[r.index], typical) for r in unproven}
            todo = round_boards(unproven, final, forecast, limit, last)
            log.warning(
                "round %d: %s at %s%.4g s, %d waiting for a longer limit",
                k,
                plural(len(todo), "board"),
                "up to " if last else "",
                limit,
                0 if last else sum(1 for f in forecast.values() if f is not None and f > limit),
            )
            if not todo:
                continue
            time_limit, last_start = limit, self.last_start(limit, span)  # one started later might outlast the budget
            if last:  # each board what is left as it starts, while that is more than any of them had
                floor = max(res.full_limit, min(tried_limit(final[r.index]) for r in todo) * ROUND_GROWTH)
                time_limit = UntilEnd(deadline - self.reserve, span, self.clock)
                last_start = max(last_start, self.last_start(floor, span))
            count = min(MAX_LAYOUT_PARTITIONS, o.layout_count + k)
            memory = min(o.memory_limit, o.layout_memory << k)
            plans = plan_layouts(todo, o.db_dir, memory, count, self.faults) if o.build else []
            self.tell_faults()
            plans = worth_waiting_for(plans, limit, self.rate)
            t0, began = self.clock.tick(), self.clock.now()
            nodes = None if o.node_limit is None else o.node_limit * 2**k
            batch = self.batch(
                todo,
                journal=self.files.journal,
                time_limit=time_limit,
                node_limit=nodes,
                fallback=fallback,
                on_outcome=self.seen,
                plans=plans,
                retry=[r.index for r in todo],
                last_start=last_start,
                known=known_of({r.index: final[r.index] for r in todo}),
            )
            tried = [x for x in batch.outcomes.values() if (x.ended or 0) >= began]  # the rest never started
            gained = sum(x.proven for x in tried)  # all were unproven
            res.rounds.append((k, limit, len(tried), gained, self.clock.tick() - t0))
            final.update({i: self.best.get(i, x) for i, x in batch.outcomes.items()})
            res.interrupted = batch.interrupted


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
