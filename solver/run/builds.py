"""What a run builds and how the builds run: one plan per shape that lacks tables
(:func:`plan_first`, :func:`plan_layouts`), each partition one job in a worker's
slot beside the searches (:class:`Builds`, :class:`solver.run.feed.Job`), the
database folder kept under the disk limit and the builds running at once under
:func:`build_memory_cap`.  The one module of :mod:`solver` that calls the build side
(:mod:`pdb_builder.make`).
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from pdb_builder.board import Shape
from pdb_builder.cores import BuildStopped, machine_memory
from pdb_builder.errors import BoardError, SlidepdbError
from pdb_builder.locks import remove_unless_read
from pdb_builder.make.building import BuildReport, build_pdb, default_partition, layout_partitions
from pdb_builder.patterns import num_placements
from pdb_builder.storage import database_files, default_db_dir, pdb_filename
from pdb_builder.words import human_bytes

from .clock import SYSTEM, Clock
from .feed import Abandoned, Job

log = logging.getLogger("slidepdb.run")

STOPPED = (Abandoned, BuildStopped)  # a build stopped at the end of the budget, not failed
LATE = "it fell behind its forecast"  # a build given up early (Builds.forecast)
BEHIND = 2.0  # a build still running at this many times its forecast is given up


@dataclass(frozen=True)
class BuildFailed:
    """A build that ended without its file, and how: ``"late"`` (given up, behind its
    forecast: :data:`LATE`), ``"stopped"`` (the budget ran out, or nothing waited on it
    any more) or ``"failed"`` (an error); ``reason`` says it in words."""

    shape_key: str
    partition: str
    how: str
    reason: str


LAYOUT_MEMORY = 512 << 20  # per pattern BFS of an exact-layout database: small, quick tables
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
    started: float = 0.0  # the clock's tick() when its build began
    give_up_at: float | None = None  # wall clock: given up if still running then (Builds.forecast)

    @property
    def per_board(self) -> float:
        """Entries over the boards that want them: what the passes order builds by, the
        cheapest a board first (the most proofs soonest)."""
        return self.entries / max(self.boards, 1)

    @property
    def zero_aware(self) -> bool:
        """Whether its tables keep the blank's regions' costs: a layout's (see build_partition);
        wall-free ones built so proved no more boards for twice the disk (docs/devquiz.md)."""
        return self.role == "layout"

    @property
    def bytes(self) -> int:
        # one byte an entry, contiguous layout (no two-bit copy: see build_partition), and one
        # more for a zero-aware table
        return self.entries * (2 if self.zero_aware else 1)


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


def _plan(wants, role: str, partitions_of, faults: dict | None) -> dict[str, Plan]:
    """A build for each distinct shape of ``wants`` ((shape, record) pairs) that
    ``partitions_of(shape)`` says lacks some partitions, with the boards that want it.
    A shape whose partitions raise :class:`~pdb_builder.errors.BoardError` (more free
    cells than tables serve, or patterns larger than the memory limit allows) gets no
    plan and its size's text and the fault go into ``faults``; None: it raises."""
    plans: dict[str, Plan] = {}
    seen: set[str] = set()
    for s, rec in wants:
        if s.key in plans:
            plans[s.key].boards += 1
            plans[s.key].records.append(rec)
        elif s.key not in seen:
            seen.add(s.key)
            try:
                parts = partitions_of(s)
            except BoardError as exc:
                if faults is None:
                    raise
                faults.setdefault(s.size_text, str(exc))
                continue
            if parts:
                plans[s.key] = Plan(s, role, 1, _entries(s, parts), parts, [rec])
    return plans


def _entries(shape: Shape, partitions) -> int:
    n = len(shape.free_cells)
    return sum(num_placements(n, len(g)) for p in partitions for g in p.groups)


def plan_wall_free(records, db_dir, memory_limit: int, faults: dict | None = None) -> list[Plan]:
    """One wall-free database per size (and goal) the file holds and the folder lacks
    (``faults``: as :func:`_plan` says)."""
    wants = (
        (r.board.shape.wall_free() if r.board.shape.goal_kind != "custom" else r.board.shape, r)
        for r in records
        if r.board is not None
    )
    return list(
        _plan(
            wants,
            "wall-free",
            lambda s: [] if _has_pdb(s, db_dir) else [default_partition(s, memory_limit)],
            faults,
        ).values()
    )


def plan_first(
    records, db_dir, memory_limit: int, layout_memory: int = LAYOUT_MEMORY, count: int = 1, faults: dict | None = None
) -> list[Plan]:
    """The tables the quick pass waits on: each size's wall-free database
    (:func:`plan_wall_free`), except where every board of the size is walled and the
    databases of their exact layouts (:func:`plan_layouts`) hold no more entries:
    there those.  On a walled board the wall-free tables stand in for its layout's,
    which are stronger (they know that no tile crosses a wall); they pay where many
    boards share them, and are a detour where the layouts cost as little.  There the
    size's wall-free cut of the layouts' pattern sizes (:func:`plan_wall_free_cuts`)
    comes with the layouts while all of them together still hold no more entries.
    ``faults``: as :func:`_plan` says."""
    out = []
    for p in plan_wall_free(records, db_dir, memory_limit, faults):
        walled = [r for r in p.records if r.board.shape.walls]
        if p.shape.walls or len(walled) < len(p.records):  # a custom goal's walled shape, or wall-free boards
            out.append(p)
            continue
        layouts = plan_layouts(walled, db_dir, layout_memory, count, faults)
        cheap = plan_wall_free_cuts(walled, db_dir, layout_memory, 1, faults) + layouts
        out += next((c for c in (cheap, layouts) if sum(q.entries for q in c) <= p.entries), [p])
    return out


def plan_layouts(
    records,
    db_dir,
    layout_memory: int = LAYOUT_MEMORY,
    count: int = 1,
    faults: dict | None = None,
    fill: bool = False,
) -> list[Plan]:
    """The exact-layout databases (``count`` partitions, and with ``fill`` the cut that
    fills the memory: :func:`layout_partitions`) each walled board in ``records``
    lacks, cheapest a board first (``faults``: as :func:`_plan` says)."""
    d = default_db_dir(db_dir)
    wants = ((r.board.shape, r) for r in _walled(records))

    def missing(s: Shape) -> list:
        cuts = layout_partitions(s, layout_memory, count, fill)
        return [p for p in cuts if not (d / pdb_filename(s, p.name)).exists()]

    plans = _plan(wants, "layout", missing, faults)
    return sorted(plans.values(), key=lambda p: (p.per_board, p.shape.key))


def plan_wall_free_cuts(
    records, db_dir, layout_memory: int = LAYOUT_MEMORY, count: int = 2, faults: dict | None = None
) -> list[Plan]:
    """For the sizes of the walled boards in ``records``: ``count`` cuts of the
    wall-free shape into patterns whose BFS fits ``layout_memory``
    (:func:`layout_partitions`; the first is the size's default where it fits), those
    the folder lacks.  They serve every board of the size, so they cost little a board,
    and their max with the exact layout's sums is the stronger heuristic (measured in
    docs/design.md).  None for a size whose folder holds other wall-free tables (of
    larger patterns, built for more memory, or the user's own): those stand alone.
    ``faults``: as :func:`_plan` says."""
    if count < 1:
        return []
    d = default_db_dir(db_dir)

    def missing(s: Shape) -> list:
        want = {pdb_filename(s, p.name): p for p in layout_partitions(s, layout_memory, count)}
        there = {f.name for f in d.glob(pdb_filename(s, "*"))}
        return [] if there - want.keys() else [p for name, p in want.items() if name not in there]

    wants = ((r.board.shape.wall_free(), r) for r in _walled(records))
    return list(_plan(wants, "wall-free", missing, faults).values())


def _walled(records):
    """The boards of ``records`` that have walls and a DevQuiz or Korf goal (their
    layouts and wall-free shapes are named)."""
    return (r for r in records if r.board is not None and r.board.shape.walls and r.board.shape.goal_kind != "custom")


def boards_served(records) -> dict[str, list[int]]:
    """Each shape key whose tables serve boards of ``records`` (a board's own shape's,
    and its size's wall-free ones: :attr:`~pdb_builder.board.Shape.wall_free_key`),
    with those boards' indices."""
    out: dict[str, list[int]] = {}
    for r in records:
        if r.board is not None:
            for key in filter(None, (r.board.shape.key, r.board.shape.wall_free_key)):
                out.setdefault(key, []).append(r.index)
    return out


def settled(o) -> bool:
    """A board decided for good (an :class:`~solver.outcome.Outcome`, or None: not yet
    seen): proven optimal, or rejected (invalid, unsolvable)."""
    return o is not None and (o.proven or o.status in ("invalid", "unsolvable"))


def build_memory_cap(memory_limit: int) -> int:
    """BFS memory the builds running at once may hold: :data:`BUILD_MEMORY_SHARE` of
    this machine's memory, at least one build's ``memory_limit``."""
    return max(int(BUILD_MEMORY_SHARE * machine_memory()), memory_limit)  # (not POSIX: one build at a time)


def build_partition(shape: Shape, partition, db_dir, zero_aware: bool = False, *, threads) -> BuildReport:
    """A build job's work (in a worker's slot, on the threads it is granted:
    :class:`solver.run.feed.Job`).  No two-bit copies: on the DevQuiz sizes they speed
    the search up too little for the build time they cost (docs/devquiz.md).  A wall
    layout's tables are zero-aware: walls cut the free cells into regions whose costs
    differ, and on the hardest boards those tables prove twice as many boards in the
    same nodes for a quarter more build time (docs/devquiz.md)."""
    return build_pdb(shape, partition, db_dir, two_bit=False, threads=threads, zero_aware=zero_aware)


class Builds:
    """The run's builds as jobs of its batches: one a partition of each plan, run in a
    worker's slot beside the searches (one thread each), the plan's boards waiting on
    them all; the database folder kept under ``disk_limit`` as each starts (room made
    first from the run's own tables that have nothing left to give: :meth:`make_room`), each outcome in the
    run's result (``res``: its ``builds``, ``skipped_builds``, ``removed_tables``,
    ``failed_builds`` and ``build_seconds``) as it ends.

    ``ledger``: the file that lists, a name and its inode a line, the database files the run built
    (:attr:`solver.run.files.RunFiles.built`, kept across sittings; None: none kept,
    none removed); ``nothing_left(shape key)``: whether no board of the run that tables
    of that shape serve is left to prove (those tables have nothing left to give it);
    ``clock``: what a build's start, end and give-up time are read on."""

    def __init__(
        self, res, db_dir, disk_limit, sittings, on_build, ledger=None, nothing_left=None, clock: Clock = SYSTEM
    ):
        self.res, self.db_dir, self.disk_limit, self.clock = res, db_dir, disk_limit, clock
        self.sittings, self.on_build = sittings, on_build
        self.ledger, self.nothing_left = (Path(ledger) if ledger is not None else None), nothing_left
        self.used = 0  # bytes in the database folder, counted on as each build starts
        # seconds a build of so many entries is expected to take (None: none is given up
        # for being late; else one still running at BEHIND times it is, set by solver.run.answer_pass)
        self.forecast = None

    def jobs(self, plans) -> list[Job]:
        self.used = disk_used(self.db_dir)
        out = []
        for p in plans:
            for part in p.partitions:
                one = Plan(p.shape, p.role, p.boards, _entries(p.shape, [part]), [part], p.records)
                job = Job(
                    build_partition,
                    (p.shape, part, self.db_dir, one.zero_aware),
                    p.records,
                    part.bfs_memory(len(p.shape.free_cells)),
                    done=functools.partial(self.done, one),
                )
                job.begin = functools.partial(self.begin, one, job)
                out.append(job)
        return out

    def begin(self, plan: Plan, job: Job | None = None) -> bool | None:
        """Whether ``plan``'s build starts now (False: skipped, over the disk limit even
        with room made; None: not yet, where its ``job`` may wait and the run's own
        tables whose boards are still being searched would make room once spent)."""
        if self.disk_limit is not None and not (room := self.make_room(plan.bytes)):
            if room is None and job is not None and job.can_wait:
                return None
            if not self.res.skipped_builds:  # the sitting's first: said as it happens, not only in the summary
                log.warning(
                    "%s %s: not built, the database folder would pass --disk-limit (%s of %s); builds over it "
                    "are skipped and their boards solved with the tables there are",
                    plan.shape.key,
                    plan.partitions[0].name,
                    human_bytes(self.used + plan.bytes),
                    human_bytes(self.disk_limit),
                )
            self.res.skipped_builds.append(plan)
            return False
        self.used += plan.bytes
        plan.started = self.clock.tick()
        if self.forecast is not None and job is not None:
            plan.give_up_at = job.give_up_at = self.clock.now() + BEHIND * self.forecast(plan.entries)
        if self.on_build:
            self.on_build(plan)
        return True

    def done(self, plan: Plan, rep: BuildReport | None, error: BaseException | None) -> None:
        self.res.build_seconds += self.clock.tick() - plan.started  # as each ends: an interrupted run counts them
        self.sittings.touch()
        if error is not None:  # one build never stops a run: its boards go on
            name = plan.partitions[0].name
            text = str(error) if isinstance(error, SlidepdbError) else f"{type(error).__name__}: {error}"
            if isinstance(error, STOPPED) and plan.give_up_at is not None and self.clock.now() >= plan.give_up_at:
                ran, planned = self.clock.tick() - plan.started, self.forecast(plan.entries)
                how, text = "late", f"{LATE}: {ran:.0f} s, forecast {planned:.0f} s"
                log.warning("%s %s: build given up, %s", plan.shape.key, name, text)
            elif isinstance(error, STOPPED):
                how = "stopped"
                log.warning("%s %s: build %s", plan.shape.key, name, error)
            else:
                how = "failed"
                log.warning("%s %s: build failed (%s); its boards are solved without it", plan.shape.key, name, text)
            self.res.failed_builds.append(BuildFailed(plan.shape.key, name, how, text))
            return
        self.res.builds.append(rep)
        if self.ledger is not None and rep.status == "built":  # (published: a kill before this line keeps it)
            try:  # the file this build published: one another process builds there later is not the run's
                ino = f" {os.stat(rep.path).st_ino}"
            except OSError:
                ino = ""
            with open(self.ledger, "a", encoding="utf-8") as fh:
                fh.write(f"{Path(rep.path).name}{ino}\n")
        if self.on_build:
            self.on_build(rep)

    def make_room(self, need: int) -> bool | None:
        """Whether ``need`` more bytes fit under the disk limit, once database files this
        run built (listed in its ledger) whose boards are all settled are removed, the
        largest first, until they do; none is removed where removing them all would not
        make them fit.  None where they do not fit yet but would once the run's own
        tables whose boards are still unsettled are spent.  A table that serves
        no board left to prove is worth less to the run than one that does.  Files the
        run did not build are never touched, and a file is removed whole, and only
        while no process reads it: a table some search holds a shared lock on
        (:func:`pdb_builder.locks.reading`) is left, and the build may wait for it."""
        if self.used + need <= self.disk_limit:
            return True
        if self.ledger is None or self.nothing_left is None:
            return False
        try:
            names = self.ledger.read_text(encoding="utf-8").splitlines()
        except OSError:
            return False
        folder, spent, own = default_db_dir(self.db_dir), [], 0
        for name, ino in dict(((line.split() + [""])[:2] for line in names if line.strip())).items():
            key, dot, _ = name.partition(".pdb.")
            path = folder / name
            if dot and name.endswith(".h5") and path.is_file():
                st = path.stat()
                if ino.isdigit() and st.st_ino != int(ino):
                    continue  # built again since by another process: its table, not the run's
                size = st.st_size
                own += size
                if self.nothing_left(key):
                    spent.append((size, path))
        if self.used + need - sum(size for size, _ in spent) > self.disk_limit:
            return None if self.used + need - own <= self.disk_limit else False
        read = False
        for size, path in sorted(spent, reverse=True):
            if self.used + need <= self.disk_limit:
                break
            if not remove_unless_read(path):  # a search of some process reads it now (or it is gone)
                read = read or path.exists()
                continue
            self.used -= size
            # the sitting's first said as it happens, the others for the log (the summary counts them)
            say = log.info if self.res.removed_tables else log.warning
            self.res.removed_tables.append((path.name, size))
            say("%s removed for room under --disk-limit (%s): no board left to prove", path.name, human_bytes(size))
        if self.used + need <= self.disk_limit:
            return True
        return None if read else False  # (read now: room once its readers end)
