"""The feed of a batch: its records and the jobs some of them wait on (database
builds), handed out as slots free up, ready records first, each job where the first
record that waits on it stands; the budget's last start kept (:class:`Feed`)."""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass

from ..search.limits import interrupt_if_stopping

LEARNING_SHARE = 0.1  # of a feed's time to its last start, before it judges by the time limit alone


@dataclass(eq=False)
class Job:
    """Work some records wait on (a database build, :mod:`solver.run.pipeline`), run where
    the boards are solved, in a worker's slot: ``fn(*args, threads=...)`` (picklable;
    ``threads``: a :class:`~pdb_builder.cores.Share`, the threads it may run now, or a
    count).
    ``records`` wait until it is done; ``memory``: the bytes it may hold while it runs.
    In the caller's thread: ``begin()`` as a slot is given to it (False: skipped, its
    records go on at once; None: not yet, asked again as records and jobs end, which the
    feed allows only while ``can_wait``: it sets that before each call, True while a
    record or job it handed out still runs, so a feed with nothing running never waits
    on one), ``done(value, error)`` when it ends (``error``: the exception it raised, or
    None).  ``give_up_at``: wall clock (set by ``begin``) after which it is stopped and
    its records go on without it (None: never)."""

    fn: Callable
    args: tuple
    records: list
    memory: int = 0
    begin: Callable[[], bool | None] = lambda: True
    done: Callable[[object, BaseException | None], None] = lambda value, error: None
    give_up_at: float | None = None
    can_wait: bool = False


class Feed:
    """The records to solve and the jobs they wait on, each handed out as soon as it
    can start, in the order of ``todo``: a job goes where the first record waiting on
    it stands, before that record.  A record waiting on jobs is handed out once they
    are all done (:meth:`job_done`).  Jobs whose ``memory`` would take the running
    jobs' total past ``memory_cap`` wait (a record goes instead), unless no job runs;
    so do jobs past ``max_jobs`` running at once (None: no cap; a dask cluster's feed
    sets it), and jobs that ``places`` has nowhere to run beside the running ones.
    After ``last_start`` (wall clock) nothing more is handed out and the feed ends;
    with ``board_seconds`` (what a record is expected to take before any has ended: its
    time limit) the records still waiting on jobs stop waiting once they would
    otherwise not all start in time (:meth:`give_up`), except ``patient`` (indices of
    records with answers already: they wait for their jobs, given up only when late).
    ``clock``: what the time is read on (:class:`solver.run.clock.Clock`, given by the run)."""

    def __init__(
        self,
        todo,
        jobs=(),
        last_start: float | None = None,
        memory_cap: int | None = None,
        board_seconds: float | None = None,
        patient=(),
        *,
        clock,
    ):
        # what the time is read on (the run's solver.run.clock.Clock), and what the loops
        # that hand out its items read
        self.clock = clock
        self.patient = set(patient)  # indices of records that wait for their jobs up to the last start
        self.last_start = last_start  # wall clock (clock.now()) after which no record starts: the feed ends
        self.memory_cap = memory_cap
        self.max_jobs: int | None = None  # jobs running at once at most (None: any number)
        # where jobs run, when that decides whether one can start beside the running ones:
        # ``fits(job)``, ``take(job)`` as it is handed out, ``free(job)`` as it ends (None:
        # anywhere; a dask cluster's feed sets it where its workers have memory limits:
        # :class:`solver.run.cluster.WorkerMemory`)
        self.places = None
        self.board_seconds = board_seconds
        self._began = clock.now()
        self._ended = [0, 0.0]  # records ended (told by ended()), their seconds
        self._released: set[int] = set()  # id() of the jobs whose records no longer wait on them
        self.size = len(todo)
        jobs = list(jobs)
        self.jobs = len(jobs)
        self._running = 0  # jobs handed out and not done
        self._handed = 0  # records handed out (those ended: self._ended[0])
        self._later: set[int] = set()  # id() of the jobs whose begin() said not yet, until asked again
        self._memory = 0  # their memory
        place = {r.index: k for k, r in enumerate(todo)}
        self._waits: dict[int, int] = {}  # record index -> jobs it waits on
        self._heap: list = []  # (position in todo, 0 a job / 1 a record, sequence, item)
        seq = 0
        for job in jobs:
            waiting = [r for r in job.records if r.index in place]
            for r in waiting:
                self._waits[r.index] = self._waits.get(r.index, 0) + 1
            first = min((place[r.index] for r in waiting), default=len(todo))
            self._heap.append((first, 0, seq, job))
            seq += 1
        self._heap += [(k, 1, 0, r) for k, r in enumerate(todo) if r.index not in self._waits]
        self._waiting = {r.index: (k, r) for k, r in enumerate(todo) if r.index in self._waits}
        heapq.heapify(self._heap)

    @property
    def unfinished(self) -> int:
        """Records not ended yet: not handed out (those waiting on jobs among them), or
        handed out and not told ended (:meth:`ended`)."""
        return self.size - self._ended[0]

    def _too_late(self) -> bool:
        return self.last_start is not None and self.clock.now() > self.last_start

    def _fits(self, job: Job) -> bool:
        if self.max_jobs is not None and self._running >= self.max_jobs:
            return False
        if self._running and self.places is not None and not self.places.fits(job):
            return False
        return self._running == 0 or self.memory_cap is None or self._memory + job.memory <= self.memory_cap

    def take(self, limit: int | None = None) -> tuple[list, bool]:
        """Up to ``limit`` records and jobs that can start, first in ``todo`` first, and
        whether the feed has ended: nothing left to hand out and no job running, or
        past ``last_start`` (the jobs still running then are of no use to anyone)."""
        if self._too_late():
            self._heap.clear()  # too late to start another: the feed ends (waiting records too)
            self._waiting.clear()
            return [], True
        out, passed = [], []
        while self._heap and (limit is None or len(out) < limit):
            item = heapq.heappop(self._heap)
            job = item[3]
            if not isinstance(job, Job):
                self._handed += 1
                out.append(job)
            elif not self._fits(job):
                passed.append(item)
            elif (began := self._begin(job)) is None:
                self._later.add(id(job))
                passed.append(item)
            elif began:
                self._running += 1
                self._memory += job.memory
                if self.places is not None:
                    self.places.take(job)
                out.append(job)
            else:  # skipped: its records go on now
                self._release(job)
        for item in passed:
            heapq.heappush(self._heap, item)
        return out, not self._heap and not self._waiting and self._running == 0

    def _begin(self, job: Job) -> bool | None:
        """``job.begin()``, told whether it may say not yet (see :class:`Job`)."""
        job.can_wait = self._running > 0 or self._handed > self._ended[0]
        began = job.begin()
        if began is None and not job.can_wait:  # nothing runs that could change its answer
            began = False
        if began is not None:
            self._later.discard(id(job))
        return began

    def ready(self, limit: int) -> int:
        """How many items could be handed out now (at most ``limit`` counted)."""
        if self._too_late():
            return 0
        n = 0
        for item in self._heap:
            if n >= limit:
                break
            n += not isinstance(item[3], Job) or id(item[3]) not in self._later and self._fits(item[3])
        return n

    def ended(self, seconds: float) -> None:
        """A record handed out ended after ``seconds``."""
        self._ended[0] += 1
        self._ended[1] += seconds

    def board_estimate(self, slots: int) -> float | None:
        """The seconds a waiting record is expected to take: the mean of those ended,
        once ``slots`` have; before that ``board_seconds``, but only once the first
        :data:`LEARNING_SHARE` of the time to ``last_start`` has gone (None: too soon
        to tell).  At the start of a run every board may wait on a build while the
        small builds that end within seconds have yet to show what a board takes (a
        whole DevQuiz file: about 1 s a board at a 5 s limit)."""
        count, seconds = self._ended
        if count >= max(slots, 1):
            return seconds / count
        now = self.clock.now()
        if self.board_seconds is None or now - self._began < LEARNING_SHARE * (self.last_start - self._began):
            return None
        return self.board_seconds

    def give_up(self, slots: int, running) -> list:
        """The running jobs to stop, their records no longer waiting on them: those past
        their ``give_up_at`` (each returned once); and when the records waiting on jobs
        that are not ``patient`` could no longer all start by ``last_start`` (``slots`` at
        a time, :meth:`board_estimate` each) if they waited longer, the jobs they wait
        on: those not started are dropped, the running ones returned (each once)."""
        now = self.clock.now()
        late = [j for j in running if j.give_up_at is not None and now > j.give_up_at and id(j) not in self._released]
        for job in late:
            self._release(job)
        urgent = {i for i in self._waiting if i not in self.patient}
        if self.last_start is None or not urgent:
            return late
        each = self.board_estimate(slots)
        rounds = -(-len(urgent) // max(slots, 1))
        if each is None or now + rounds * each < self.last_start:
            return late

        def waited_on(job) -> bool:
            return any(r.index in urgent for r in job.records)

        dropped = [item[3] for item in self._heap if isinstance(item[3], Job) and waited_on(item[3])]
        self._heap = [item for item in self._heap if not (isinstance(item[3], Job) and waited_on(item[3]))]
        heapq.heapify(self._heap)
        stopped = [j for j in running if waited_on(j) and id(j) not in self._released]
        for job in dropped + stopped:  # their records onto the heap, each once
            self._release(job)
        return late + stopped

    def abandon(self, job: Job) -> None:
        """``job`` was stopped unfinished (past ``last_start``: nothing waits on it)."""
        self._stopped_running(job)
        job.done(None, Abandoned("stopped unfinished: the time budget ran out"))

    def job_done(self, job: Job, result: Callable) -> None:
        """``job`` ended: ``result()`` gives its value or raises what it raised (handed
        to ``job.done``: its records go on either way)."""
        try:
            value, error = result(), None
        except Exception as exc:  # noqa: BLE001 - the job's owner decides
            interrupt_if_stopping(exc)  # SIGTERM or Ctrl-C, which a library turned into another exception
            value, error = None, exc
        self._stopped_running(job)
        job.done(value, error)
        self._release(job)

    def _stopped_running(self, job: Job) -> None:
        self._running -= 1
        self._memory -= job.memory
        if self.places is not None:
            self.places.free(job)

    def _release(self, job: Job) -> None:
        if id(job) in self._released:
            return
        self._released.add(id(job))
        for r in job.records:
            n = self._waits.get(r.index)
            if n is None:
                continue
            if n > 1:
                self._waits[r.index] = n - 1
                continue
            del self._waits[r.index]
            item = self._waiting.pop(r.index, None)
            if item is not None:
                heapq.heappush(self._heap, (item[0], 1, 0, item[1]))


class Abandoned(Exception):
    """A job stopped unfinished at the end of the time budget."""
