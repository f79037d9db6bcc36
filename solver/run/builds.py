"""How a run's builds run: each partition of a plan (:mod:`solver.run.plans`) one job in a worker's
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
from dataclasses import dataclass
from pathlib import Path

from pdb_builder.board import Shape
from pdb_builder.cores import BuildStopped, machine_memory
from pdb_builder.errors import SlidepdbError
from pdb_builder.locks import remove_unless_read
from pdb_builder.make.building import BuildReport, build_pdb
from pdb_builder.storage import database_files, default_db_dir
from pdb_builder.words import human_bytes

from .clock import SYSTEM, Clock
from .feed import Abandoned, Job
from .plans import Plan, entries_of

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


# the share of the machine's memory the builds running side by side may hold at once
BUILD_MEMORY_SHARE = 0.5
# disk_limit="auto": what the database folder holds at the start plus this share of its disk's free space
AUTO_DISK = "auto"
AUTO_DISK_SHARE = 0.5


def auto_disk_limit(db_dir) -> int:
    """The database folder's size now plus :data:`AUTO_DISK_SHARE` of the free space
    of the disk it is on (its nearest existing folder when it is not made yet)."""
    folder = Path(default_db_dir(db_dir)).resolve()
    while not folder.exists():
        folder = folder.parent
    return disk_used(db_dir) + int(AUTO_DISK_SHARE * shutil.disk_usage(folder).free)


def folder_names(db_dir) -> frozenset[str]:
    """The names of the files in the database folder (none where it is not made yet):
    what the run's planners read of it (:mod:`solver.run.plans`)."""
    try:
        return frozenset(p.name for p in database_files(db_dir))
    except OSError:
        return frozenset()


def disk_used(db_dir) -> int:
    total = 0
    for p in database_files(default_db_dir(db_dir)):
        try:
            total += p.stat().st_size
        except FileNotFoundError:  # removed since the listing
            continue
    return total


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
                one = Plan(p.shape, p.role, p.boards, entries_of(p.shape, [part]), [part], p.records)
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
                if ino.isdecimal() and st.st_ino != int(ino):
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
