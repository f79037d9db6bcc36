"""``slidepdb run``: a whole problem file from one command.

1. **Wall-free databases**: one per board size of the file (and goal), the size's
   default partition under ``memory_limit``; sizes that already have one are kept.
2. **Quick pass**: every board, optimal search only, ``quick_limit`` seconds each,
   on the wall-free tables (walls as fixed home tiles), Manhattan and the goal
   tables found.  It runs alongside step 1, the largest build first: a size's
   boards start as soon as its database is published.
3. **Exact layouts where they pay**: for each walled board the quick pass did not
   prove, the database of its exact wall layout (small patterns: ``layout_memory``
   per pattern BFS; ``layout_count`` of them, disjoint ways to cut the same
   tiles, whose sums the solver maxes), while the database folder stays under
   ``disk_limit``.  A retry with a larger ``layout_count`` builds the ones a layout lacks.
   A build that fails (full disk, memory, a damaged file in the way) is logged and
   listed in the report; its boards are solved with the tables there are.
4. **Full pass**: those boards again with ``time_limit`` and the weighted fallback,
   so each gets an answer, with its proven lower bound when not optimal.  Without a
   ``time_limit``, :data:`DEFAULT_TIME_LIMIT`; with a budget in seconds, what lets
   the full pass take :data:`FULL_PASS_SHARE` of the time left at its start (a board
   takes about one limit on average, :data:`MIN_TIME_LIMIT` to the default; planned
   once, kept across sittings).  The full pass always runs to its end.  It runs
   alongside step 3: boards that need no build start at once, the others as soon
   as their layout's database is published.
5. With a budget (``--budget``, wall-clock seconds for the run, builds included,
   every sitting together: a resumed run has what the earlier sittings left,
   :class:`solver.run.timeline.Sittings`; ``"auto"``, the command's default: twice the
   running time at the end of the full pass, so the rounds take at most as long as
   everything before them):
   rounds on the full pass's boards left unanswered or unproven, those first, then
   the smallest gap to their lower bound: round k gives each board 2^k times
   ``time_limit`` (and ``node_limit``), asks for ``layout_count + k`` exact-layout partitions (at most
   :data:`MAX_LAYOUT_PARTITIONS`) of patterns up to ``layout_memory`` x 2^k (at most
   ``memory_limit``), and starts boards in that order while one can still end before
   the budget does (:data:`BOARD_SPAN` limits a board, :data:`RESERVE` kept for the
   answer file); each keeps its better outcome.  A board whose journalled outcome
   already had a round's limit (an earlier sitting's round) skips that round.  The
   rounds stop when no board is left or none could start.
6. The answer file (never over the file's move limits) and the report.

Builds and searches share the workers (``workers`` local processes, or the threads
of a dask cluster): a build is a job in a worker's slot, one thread like a search
(:class:`_Builds`, :class:`solver.run.slots.Feed`), so no core runs two things and
many small builds run side by side; a build goes where the first board that waits
on it stands in the pass's order, and the builds running at once hold at most
:func:`build_memory_cap` of BFS memory.  With one worker each build has every core.

Each pass keeps a journal beside the answer file (``OUT.quick.jsonl``,
``OUT.progress.jsonl``; ``OUT.timeline.csv``, the proven count against elapsed
time, is written from them at the end: :mod:`solver.run.timeline`), builds publish
atomically, so a killed run continues with ``resume`` where it stopped.  The
journals stay when the run is complete: they are its per-board record, and
``retry`` solves the boards of a finished (or unfinished) full pass again that it
left unanswered or unproven, keeping the better outcome of each.
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from pdb_builder.board import Shape
from pdb_builder.make.building import BuildReport, build_pdb, default_partition, layout_partitions
from pdb_builder.patterns import num_placements
from pdb_builder.storage import database_files, default_db_dir, pdb_filename

from ..outcome import Outcome
from .batch import BatchResult, run_batch, write_answers
from .journal import beside, journal_attempts, journal_path, read_journal, refuse_unless_resume
from .slots import Job, cluster_threads
from .timeline import Sittings, write_timeline

log = logging.getLogger("slidepdb.run")

LAYOUT_MEMORY = 512 << 20  # per pattern BFS of an exact-layout database: small, quick tables
# --budget rounds: a board's worst wall time in time limits (its search, the fallback's
# 2 limits, a slice of slack); the seconds kept back to write the answer file; the most
# exact-layout partitions (disjoint cuts of the same tiles) a round asks for
BOARD_SPAN = 3.2
RESERVE = 30.0
MAX_LAYOUT_PARTITIONS = 5
AUTO_BUDGET = "auto"  # twice the running time at the end of the full pass
# the full pass's time limit: the default, and with a budget in seconds the share of
# what is left that the full pass may take (the rest goes to the rounds), at least MIN
DEFAULT_TIME_LIMIT = 60.0
FULL_PASS_SHARE = 0.5
MIN_TIME_LIMIT = 5.0
# the share of the machine's memory the builds running side by side may hold at once
BUILD_MEMORY_SHARE = 0.5
# disk_limit="auto": what the database folder holds at the start plus this share of its disk's free space
AUTO_DISK = "auto"
AUTO_DISK_SHARE = 0.5


@dataclass
class Plan:
    shape: Shape
    role: str  # "wall-free" or "layout"
    boards: int
    entries: int
    partitions: list = field(default_factory=list)  # one file each, one build job each
    records: list = field(default_factory=list)  # the boards that want them
    started: float = 0.0  # perf_counter() when its build began

    @property
    def bytes(self) -> int:
        return self.entries  # one byte an entry, contiguous layout (no two-bit copy: see build_partition)


@dataclass
class RunResult:
    outcomes: dict[int, Outcome] = field(default_factory=dict)
    builds: list[BuildReport] = field(default_factory=list)
    skipped_builds: list[Plan] = field(default_factory=list)  # over the disk limit
    failed_builds: list[tuple[str, str, str]] = field(default_factory=list)  # (shape key, partition, error)
    build_seconds: float = 0.0
    quick: BatchResult | None = None
    full: BatchResult | None = None
    left_out: set[int] = field(default_factory=set)
    interrupted: bool = False
    timeline: Path | None = None  # ANSWERS.timeline.csv (solver/run/timeline.py)
    full_limit: float | None = None  # the full pass's time limit (given, or planned from the budget)
    rounds: list[tuple] = field(default_factory=list)  # --budget: (round, time limit, boards, proven, seconds)
    earlier: tuple[int, float] = (0, 0.0)  # earlier sittings of the run (resumed): how many, seconds they spent

    def phase_rows(self, total_seconds: float) -> list[tuple]:
        """Time per step: builds (those of the full pass overlap its solving), quick pass,
        full pass, all."""
        q, f = self.quick, self.full
        proven = sum(1 for o in (q.outcomes.values() if q else []) if o.extra.get("optimal"))
        return [
            (
                "builds",
                f"{len(self.builds)} ({sum(1 for b in self.builds if b.status != 'skipped')} new)",
                f"{self.build_seconds:.1f}",
            ),
            ("quick pass", f"{len(q.outcomes) if q else 0} boards, {proven} proven", f"{q.seconds:.1f}" if q else "-"),
            (
                "full pass",
                f"{len(f.outcomes) if f else 0} boards" + (f" at {self.full_limit:g} s" if self.full_limit else ""),
                f"{f.seconds:.1f}" if f else "-",
            ),
            *(
                (f"round {k}", f"{n} boards at {limit:g} s, {gained} more proven", f"{secs:.1f}")
                for k, limit, n, gained, secs in self.rounds
            ),
            ("all", f"{len(self.outcomes)} boards", f"{total_seconds:.1f}"),
            *(
                [("earlier sittings", f"{self.earlier[0]} (the budget counts them)", f"{self.earlier[1]:.1f}")]
                if self.earlier[0]
                else []
            ),
        ]


def quick_journal(out_path) -> Path:
    return beside(out_path, ".quick.jsonl")


def journalled_outcomes(records, out_path) -> dict[int, Outcome]:
    """What the journals of an unfinished run hold: the quick pass's finished boards
    (its limits go on to the full pass) and the full pass's outcomes."""
    out = {i: o for i, o in read_journal(quick_journal(out_path), records).items() if o.status != "limit"}
    out.update(read_journal(journal_path(out_path), records))
    return out


def _has_pdb(shape: Shape, db_dir) -> bool:
    return any(default_db_dir(db_dir).glob(f"{shape.key}.pdb.*.h5"))


def auto_disk_limit(db_dir) -> int:
    """The database folder's size now plus :data:`AUTO_DISK_SHARE` of the free space
    of the disk it is on (its nearest existing folder when it is not made yet)."""
    folder = Path(default_db_dir(db_dir)).resolve()
    while not folder.exists():
        folder = folder.parent
    return disk_used(db_dir) + int(AUTO_DISK_SHARE * shutil.disk_usage(folder).free)


def disk_used(db_dir) -> int:
    total = 0
    for p in database_files(default_db_dir(db_dir)):
        try:
            total += p.stat().st_size
        except FileNotFoundError:  # removed since the listing
            continue
    return total


def _plan(wants, role: str, partitions_of) -> dict[str, Plan]:
    """A build for each distinct shape of ``wants`` ((shape, record) pairs) that
    ``partitions_of(shape)`` says lacks some partitions, with the boards that want it."""
    plans: dict[str, Plan] = {}
    seen: set[str] = set()
    for s, rec in wants:
        if s.key in plans:
            plans[s.key].boards += 1
            plans[s.key].records.append(rec)
        elif s.key not in seen:
            seen.add(s.key)
            parts = partitions_of(s)
            if parts:
                plans[s.key] = Plan(s, role, 1, _entries(s, parts), parts, [rec])
    return plans


def _entries(shape: Shape, partitions) -> int:
    n = len(shape.free_cells)
    return sum(num_placements(n, len(g)) for p in partitions for g in p.groups)


def plan_wall_free(records, db_dir, memory_limit: int) -> list[Plan]:
    """One wall-free database per size (and goal) the file holds and the folder lacks."""
    wants = (
        (r.board.shape.wall_free() if r.board.shape.goal_kind != "custom" else r.board.shape, r)
        for r in records
        if r.board is not None
    )
    return list(
        _plan(
            wants, "wall-free", lambda s: [] if _has_pdb(s, db_dir) else [default_partition(s, memory_limit)]
        ).values()
    )


def plan_layouts(records, db_dir, layout_memory: int = LAYOUT_MEMORY, count: int = 1) -> list[Plan]:
    """The exact-layout databases (``count`` partitions, :func:`layout_partitions`)
    each walled board in ``records`` lacks, cheapest a board first."""
    d = default_db_dir(db_dir)
    wants = (
        (r.board.shape, r)
        for r in records
        if r.board is not None and r.board.shape.walls and r.board.shape.goal_kind != "custom"
    )
    plans = _plan(
        wants,
        "layout",
        lambda s: [p for p in layout_partitions(s, layout_memory, count) if not (d / pdb_filename(s, p.name)).exists()],
    )
    return sorted(plans.values(), key=lambda p: (p.entries / p.boards, p.shape.key))


RETRY_MODES = ("unanswered", "unproven", "closest")


def _retry_order(o: Outcome | None, closest: bool = False, attempts: int = 0):
    """Sort key of a full-pass board: the fewest earlier attempts first (a retry run
    again after a kill goes on with the boards it had not reached), then worst first:
    not solved yet or no answer, then the largest gap to the lower bound; so an
    interrupted retry has mended the most.  ``closest``: the smallest gap first (the
    proofs a longer search most likely completes)."""
    length = None if o is None else o.extra.get("length")
    if length is None:
        return attempts, -(1 << 30)
    gap = length - (o.extra.get("lower_bound") or 0)
    return attempts, gap if closest else -gap


def build_memory_cap(memory_limit: int) -> int:
    """BFS memory the builds running at once may hold: :data:`BUILD_MEMORY_SHARE` of
    this machine's memory, at least one build's ``memory_limit``."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # not POSIX: one build at a time
        total = 0
    return max(int(BUILD_MEMORY_SHARE * total), memory_limit)


def build_partition(shape: Shape, partition, db_dir, *, parallel: bool) -> BuildReport:
    """A build job's work (in a worker's slot: :class:`solver.run.slots.Job`)."""
    # no two-bit copies: on the DevQuiz sizes they speed the search up too little for
    # the build time they cost (docs/devquiz.md)
    return build_pdb(shape, partition, db_dir, two_bit=False, parallel=parallel)


class _Builds:
    """The run's builds as jobs of its batches: one a partition of each plan, run in a
    worker's slot beside the searches (one thread each), the plan's boards waiting on
    them all; the database folder kept under ``disk_limit`` as each starts, each
    outcome in the run's result (``res``) as it ends."""

    def __init__(self, res: RunResult, db_dir, disk_limit, sittings: Sittings, on_build):
        self.res, self.db_dir, self.disk_limit = res, db_dir, disk_limit
        self.sittings, self.on_build = sittings, on_build
        self.used = 0  # bytes in the database folder, counted on as each build starts

    def jobs(self, plans) -> list[Job]:
        self.used = disk_used(self.db_dir)
        out = []
        for p in plans:
            for part in p.partitions:
                one = Plan(p.shape, p.role, p.boards, _entries(p.shape, [part]), [part], p.records)
                out.append(
                    Job(
                        build_partition,
                        (p.shape, part, self.db_dir),
                        p.records,
                        part.bfs_memory(len(p.shape.free_cells)),
                        functools.partial(self.begin, one),
                        functools.partial(self.done, one),
                    )
                )
        return out

    def begin(self, plan: Plan) -> bool:
        if self.disk_limit is not None and self.used + plan.bytes > self.disk_limit:
            self.res.skipped_builds.append(plan)
            return False
        self.used += plan.bytes
        plan.started = time.perf_counter()
        if self.on_build:
            self.on_build(plan)
        return True

    def done(self, plan: Plan, rep: BuildReport | None, error: BaseException | None) -> None:
        self.res.build_seconds += time.perf_counter() - plan.started  # as each ends: an interrupted run counts them
        self.sittings.touch()
        if error is not None:  # one build never stops a run: its boards go on
            name, text = plan.partitions[0].name, f"{type(error).__name__}: {error}"
            log.warning("%s %s: build failed (%s); its boards are solved without it", plan.shape.key, name, text)
            self.res.failed_builds.append((plan.shape.key, name, text))
            return
        self.res.builds.append(rep)
        if self.on_build:
            self.on_build(rep)


def run_pipeline(
    records,
    out_path,
    *,
    db_dir=None,
    limits=None,
    time_limit: float | None = None,
    quick_limit: float = 5.0,
    node_limit: int | None = None,
    memory_limit: int = 4 << 30,
    layout_memory: int = LAYOUT_MEMORY,
    layout_count: int = 1,
    disk_limit: int | None = None,
    workers: int = 1,
    scheduler=None,
    resume: bool = False,
    fallback: bool = True,
    build: bool = True,
    on_outcome=None,
    on_build=None,
    quick_node_limit: int | None = None,
    retry: str | None = None,
    budget: float | str | None = None,
) -> RunResult:
    """Steps 1-5 of the module docstring.  ``on_outcome`` sees each final outcome
    (a board proven in the quick pass, or the full pass's verdict); ``on_build``
    each build as it is planned (Plan) and finished (BuildReport).  ``quick_node_limit``
    caps the quick pass's nodes too (tests use it to send boards to the full pass).
    ``retry``: "unanswered" or "unproven" (or "closest": the unproven, smallest gap
    first), the full-pass boards to solve again.  ``budget``: seconds for the run
    (with ``resume``, less what earlier sittings spent), or ``"auto"``; after the full
    pass, rounds (step 5 of the module docstring) until it is spent; None: no rounds.
    ``disk_limit``: bytes, None (none), or ``"auto"`` (:func:`auto_disk_limit` at the
    first sitting, kept for the later ones)."""
    if retry not in (None, *RETRY_MODES):
        raise ValueError(f"retry {retry!r}: expected one of {', '.join(RETRY_MODES)}")
    if isinstance(budget, str) and budget != AUTO_BUDGET:
        raise ValueError(f"budget {budget!r}: expected seconds, {AUTO_BUDGET!r} or None")
    out_path = Path(out_path)
    res = RunResult()
    qj, fj = quick_journal(out_path), journal_path(out_path)
    for j in (qj, fj):
        refuse_unless_resume(j, resume)
    sittings = Sittings.begin(out_path, resume)
    res.earlier = (len(sittings.spans) - 1, sittings.spent_before)
    deadline = None if budget in (None, AUTO_BUDGET) else sittings.deadline(budget)
    seen = on_outcome

    def on_outcome(o: Outcome):
        sittings.touch()
        if seen:
            seen(o)

    if disk_limit == AUTO_DISK:  # worked out once, kept across sittings
        disk_limit = int(sittings.marks.get("disk") or sittings.mark("disk", auto_disk_limit(db_dir)))
    builds = _Builds(res, db_dir, disk_limit, sittings, on_build)
    try:
        # quick pass, each size's boards as soon as its wall-free database is built: proven
        # boards are final; rejected ones (invalid, unsolvable) too
        final: dict[int, Outcome] = {}

        def quick_seen(o: Outcome):
            if o.status != "limit":
                final[o.index] = o
                on_outcome(o)
            else:
                sittings.touch()

        caps = [x for x in (node_limit, quick_node_limit) if x is not None]
        wall_free = plan_wall_free(records, db_dir, memory_limit) if build else []
        # the boards whose tables are there first, then the largest build first: the
        # longest builds start at once, the small sizes' builds and boards fill the other
        # slots meanwhile, and no slot waits idle on a large build at the end
        size = {r.index: p.entries for p in wall_free for r in p.records}
        res.quick = run_batch(
            sorted(records, key=lambda r: (r.index in size, -size.get(r.index, 0))),
            db_dir=db_dir,
            time_limit=quick_limit,
            node_limit=min(caps, default=None),
            workers=workers,
            journal=qj,
            resume=True,
            fallback=False,
            scheduler=scheduler,
            on_outcome=quick_seen,
            jobs=builds.jobs(wall_free),
            job_memory=build_memory_cap(memory_limit),
        )
        if res.quick.interrupted:
            raise KeyboardInterrupt
        rest = [r for r in records if r.index not in final]
        # the layouts build in the workers' slots beside the boards that need no build;
        # each layout's boards go to the solvers as soon as its database is published
        done_full = read_journal(fj, rest)
        again = {
            i: o
            for i, o in done_full.items()
            if retry in ("unproven", "closest")
            and not o.extra.get("optimal")
            or retry == "unanswered"
            and o.status in ("limit", "error")
        }
        for i in again:
            del done_full[i]
        if again:
            tries = journal_attempts(fj)
            rest.sort(key=lambda r: _retry_order(again.get(r.index), retry == "closest", tries[r.index]))
        plans = (
            plan_layouts([r for r in rest if r.index not in done_full], db_dir, layout_memory, layout_count)
            if build
            else []
        )

        def full_batch(recs, plans, limit, nodes, retried, last_start=None) -> BatchResult:
            """A full-pass batch (its journal ``fj``): the boards of ``plans`` wait for their builds."""
            return run_batch(
                recs,
                db_dir=db_dir,
                time_limit=limit,
                node_limit=nodes,
                workers=workers,
                journal=fj,
                resume=True,
                fallback=fallback,
                scheduler=scheduler,
                on_outcome=on_outcome,
                jobs=builds.jobs(plans),
                job_memory=build_memory_cap(memory_limit),
                retry=retried,
                last_start=last_start,
            )

        if time_limit is None:
            time_limit = sittings.marks.get("limit")  # planned in an earlier sitting
        if time_limit is None and deadline is not None:
            todo = [r for r in rest if r.index not in done_full]
            slots = workers if scheduler is None else cluster_threads(scheduler)
            time_limit = sittings.mark("limit", _full_pass_limit(deadline, todo, slots))
        if time_limit is None:
            time_limit = DEFAULT_TIME_LIMIT
        res.full_limit = time_limit
        res.full = full_batch(rest, plans, time_limit, node_limit, list(again))
        final.update(res.full.outcomes)
        res.outcomes = final
        res.interrupted = res.full.interrupted
        if budget == AUTO_BUDGET and not res.interrupted:
            passes = sittings.marks.get("passes")
            if passes is None or again:  # kept from the sitting that ended the full pass
                passes = sittings.mark("passes", sittings.running(time.time()))
            deadline = sittings.deadline(2 * passes)
        k = 0
        while deadline is not None and not res.interrupted:
            k += 1
            limit = time_limit * 2**k
            unproven = [r for r in rest if final.get(r.index) is not None and not final[r.index].extra.get("optimal")]
            last_start = deadline - RESERVE - BOARD_SPAN * limit  # a board started later might outlast the budget
            if not unproven or time.time() > last_start:
                break
            todo = sorted(
                (r for r in unproven if _tried_limit(final[r.index]) < limit),  # not this round's in an earlier sitting
                key=lambda r: _retry_order(final[r.index], closest=True),
            )
            if not todo:
                continue
            count = min(MAX_LAYOUT_PARTITIONS, layout_count + k)
            plans = plan_layouts(todo, db_dir, min(memory_limit, layout_memory << k), count) if build else []
            t0, began = time.perf_counter(), time.time()
            nodes = None if node_limit is None else node_limit * 2**k
            batch = full_batch(todo, plans, limit, nodes, [r.index for r in todo], last_start)
            tried = [o for o in batch.outcomes.values() if o.extra.get("ended", 0) >= began]  # the rest never started
            gained = sum(bool(o.extra.get("optimal")) for o in tried)  # all were unproven
            res.rounds.append((k, limit, len(tried), gained, time.perf_counter() - t0))
            final.update(batch.outcomes)
            res.interrupted = batch.interrupted
    except KeyboardInterrupt:
        res.interrupted = True
    if not res.outcomes:  # interrupted early: whatever the journals hold
        res.outcomes = journalled_outcomes(records, out_path)
    res.left_out = write_answers(out_path, records, res.outcomes, limits)
    sittings.touch(force=True)
    res.timeline = write_timeline(records, out_path, [("quick", qj), ("full", fj)])
    return res


def _full_pass_limit(deadline: float, todo, slots: int) -> float:
    """The full pass's time limit under a budget (``deadline``) with no --time-limit:
    what lets ``todo`` take about FULL_PASS_SHARE of what is left at one limit a
    board on average (the measured mean: most are proven early, the unproven take up
    to BOARD_SPAN limits), ``slots`` boards at once."""
    if not todo:
        return DEFAULT_TIME_LIMIT
    left = deadline - RESERVE - time.time()
    fit = FULL_PASS_SHARE * left * max(slots, 1) / len(todo)
    return round(min(DEFAULT_TIME_LIMIT, max(MIN_TIME_LIMIT, fit)), 1)


def _tried_limit(o: Outcome) -> float:
    """The largest time limit ``o``'s board has been given (0 when not recorded)."""
    t = o.extra.get("time_limit", 0)
    return float("inf") if t is None else float(t)
