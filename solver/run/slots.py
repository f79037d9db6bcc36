"""Where boards are solved: local worker processes or a dask.distributed cluster,
fed as they become ready (:class:`Feed`), outcomes yielded as boards finish."""

from __future__ import annotations

import heapq
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from pdb_builder.cores import RELEASED, Share, usable_cores
from pdb_builder.formats import Record

from ..api import SolverPool, solve_record
from ..outcome import Outcome
from ..search.limits import interrupt_if_stopping

# -- many boards -----------------------------------------------------------------------------
#
# Executors: the solving of many boards goes through ``_local_outcomes`` or
# ``solver.run.cluster.dask_outcomes``, generators that yield outcomes as boards finish.  Local
# processes by default (each maps the tables once and keeps its compiled kernels); a
# dask.distributed cluster when a scheduler address is given (its workers must see the same
# database folder).


@dataclass(frozen=True)
class Pools:
    """How each process (or dask thread) that solves boards makes its
    :class:`~solver.api.SolverPool`: the database folder, whether to read it, each
    board's threads, ``go_on`` (a table that cannot be read is left out), and
    ``grow``: a board given one thread takes the idle slots too (local processes)."""

    db_dir: object = None
    use_db: bool = True
    threads: int = 1
    go_on: bool = False
    grow: bool = True

    def pool(self, **kw) -> SolverPool:
        return SolverPool(self.db_dir, use_db=self.use_db, threads=self.threads, go_on=self.go_on, **kw)


_WORKER_POOL: SolverPool | None = None
WATCH = 0.1  # seconds between looks at the feed while a job runs in this process
LEARNING_SHARE = 0.1  # of a feed's time to its last start, before it judges by the time limit alone
_LANES = None  # the run's lanes (Lanes.cells), in a worker: where each running job's grant is


def _worker_init(pools: Pools, lanes=None):
    global _WORKER_POOL, _LANES
    import signal

    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the parent decides when a batch stops
    # Ctrl-C on a terminal signals the whole process group: the parent stops the batch and
    # ends its workers; a worker interrupted itself could die halfway through sending a
    # result, and the pool's thread would wait for the rest of it for ever
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _WORKER_POOL = pools.pool()
    _LANES = None if lanes is None else Lanes.view(lanes)


def lane_share(cells: np.ndarray, lane: int) -> Share:
    """The threads lane ``lane`` of ``cells`` (:attr:`Lanes.cells`) grants: as many as
    whoever keeps the lanes gives it while it runs."""
    return Share(grant=cells[lane, 0:1], used=cells[lane, 1:2])


def _lane_share(lane: int) -> Share:
    return lane_share(_LANES, lane)


def _worker_job(fn, args, lane: int):
    """A job in a worker: ``fn`` on the threads its lane grants."""
    return fn(*args, threads=_lane_share(lane))


def _worker_solve(rec: Record, time_limit, node_limit, fallback, known=None, lane: int | None = None) -> Outcome:
    """A board in a worker: its optimal search on the threads its lane grants (one unless
    slots are idle: :meth:`Lanes.share`)."""
    threads = None if lane is None else _lane_share(lane)
    return solve_record(
        rec, _WORKER_POOL, time_limit=time_limit, node_limit=node_limit, fallback=fallback, threads=threads, known=known
    )


@dataclass(eq=False)
class Job:
    """Work some records wait on (a database build, :mod:`solver.run.pipeline`), run where
    the boards are solved, in a worker's slot: ``fn(*args, threads=...)`` (picklable;
    ``threads``: a :class:`~pdb_builder.cores.Share`, the threads it may run now, or a
    count).
    ``records`` wait until it is done; ``memory``: the bytes it may hold while it runs.
    In the caller's thread: ``begin()`` as a slot is given to it (False: skipped, its
    records go on at once), ``done(value, error)`` when it ends (``error``: the
    exception it raised, or None)."""

    fn: Callable
    args: tuple
    records: list
    memory: int = 0
    begin: Callable[[], bool] = lambda: True
    done: Callable[[object, BaseException | None], None] = lambda value, error: None


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
    otherwise not all start in time (:meth:`give_up`)."""

    def __init__(
        self,
        todo,
        jobs=(),
        last_start: float | None = None,
        memory_cap: int | None = None,
        board_seconds: float | None = None,
    ):
        self.last_start = last_start  # wall clock (time.time()) after which no record starts: the feed ends
        self.memory_cap = memory_cap
        self.max_jobs: int | None = None  # jobs running at once at most (None: any number)
        # where jobs run, when that decides whether one can start beside the running ones:
        # ``fits(job)``, ``take(job)`` as it is handed out, ``free(job)`` as it ends (None:
        # anywhere; a dask cluster's feed sets it where its workers have memory limits:
        # :class:`solver.run.cluster.WorkerMemory`)
        self.places = None
        self.board_seconds = board_seconds
        self._began = time.time()
        self._ended = [0, 0.0]  # records ended (told by ended()), their seconds
        self._released: set[int] = set()  # id() of the jobs whose records no longer wait on them
        self.size = len(todo)
        jobs = list(jobs)
        self.jobs = len(jobs)
        self._running = 0  # jobs handed out and not done
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

    def _too_late(self) -> bool:
        return self.last_start is not None and time.time() > self.last_start

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
                out.append(job)
            elif not self._fits(job):
                passed.append(item)
            elif job.begin():
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

    def ready(self, limit: int) -> int:
        """How many items could be handed out now (at most ``limit`` counted)."""
        if self._too_late():
            return 0
        n = 0
        for item in self._heap:
            if n >= limit:
                break
            n += not isinstance(item[3], Job) or self._fits(item[3])
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
        now = time.time()
        if self.board_seconds is None or now - self._began < LEARNING_SHARE * (self.last_start - self._began):
            return None
        return self.board_seconds

    def give_up(self, slots: int, running) -> list:
        """When the records waiting on jobs could no longer all start by ``last_start``
        (``slots`` at a time, :meth:`board_estimate` each) if they waited longer: they
        wait no more, the jobs not started are dropped, and ``running`` (the jobs
        running) are returned, to be stopped.  Otherwise nothing is done and nothing
        returned."""
        if self.last_start is None or not self._waiting:
            return []
        each = self.board_estimate(slots)
        rounds = -(-len(self._waiting) // max(slots, 1))
        if each is None or time.time() + rounds * each < self.last_start:
            return []
        dropped = [item[3] for item in self._heap if isinstance(item[3], Job)]
        self._heap = [item for item in self._heap if not isinstance(item[3], Job)]
        heapq.heapify(self._heap)
        for job in dropped + list(running):  # their records onto the heap, each once
            self._release(job)
        return list(running)

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


class Lanes:
    """The thread grants of the jobs and boards running in local worker processes, in
    memory the workers share: a lane ``(grant, threads running)`` each.  The parent
    gives the slots no waiting item can use (nothing ready to start) to the running
    jobs, and to the running boards when no job runs; it lowers their grants as soon
    as items are ready, the boards' first.  A job's threads above a lowered grant stop
    within a chunk of a BFS layer (:mod:`pdb_builder.make.share`), a board's at the end
    of a window of its split search (:mod:`solver.search.threads`), and the slot
    counts as taken until they have."""

    def __init__(self, count: int, ctx=None):
        import multiprocessing as mp

        self.raw = (ctx or mp).RawArray("q", 2 * count)
        self.cells = self.view(self.raw)
        self._free = list(range(count - 1, -1, -1))
        self._lane: dict[int, int] = {}  # id(item) -> its lane
        self._jobs: set[int] = set()  # the lanes of jobs
        self._fixed: set[int] = set()  # the lanes whose grant is never changed

    @staticmethod
    def view(raw) -> np.ndarray:
        return np.frombuffer(raw, dtype=np.int64).reshape(-1, 2)

    def open(self, item, job: bool | None = None, fixed: int | None = None) -> int:
        """A lane for ``item`` (a :class:`Job`, or a board's record; ``job`` says which
        where ``item`` is neither), granted one thread, or ``fixed`` threads that
        :meth:`share` never changes."""
        lane = self._free.pop()
        self.cells[lane] = (fixed or 1, 0)
        self._lane[id(item)] = lane
        if isinstance(item, Job) if job is None else job:
            self._jobs.add(lane)
        if fixed is not None:
            self._fixed.add(lane)
        return lane

    def stop(self, job: Job) -> None:
        """Ask ``job`` to stop at its next chunk (a negative grant)."""
        self.cells[self._lane[id(job)], 0] = -1

    def close(self, item) -> None:
        lane = self._lane.pop(id(item))
        self.cells[lane] = (0, 0)
        self._jobs.discard(lane)
        self._fixed.discard(lane)
        self._free.append(lane)

    @property
    def full(self) -> bool:
        return not self._free

    def taken(self) -> int:
        """Slots the running items hold: each its grant, or its threads still running above
        a lowered one; one, for a board whose search has released its grant (its fallback)."""
        grant, used = self.cells[:, 0], self.cells[:, 1]
        return sum(1 if used[k] == RELEASED else max(1, int(grant[k]), int(used[k])) for k in self._lane.values())

    def held(self) -> int:
        """Slots the running items' grants hold, whatever their threads do now: one for a
        board that released its grant or a job told to stop."""
        grant, used = self.cells[:, 0], self.cells[:, 1]
        return sum(1 if used[k] == RELEASED else max(1, int(grant[k])) for k in self._lane.values())

    def balance(self, slots: int) -> None:
        """Keep the grants within ``slots`` where nobody knows what waits to start (a dask
        worker's tasks: the cluster hands them out): grants above the slots are lowered,
        the boards' first, and the idle slots go to the jobs, or to the boards when no job
        runs (:meth:`share`)."""
        over = self.held() - slots
        if over > 0:
            self.share(0, over)
        else:
            self.share(slots - self.taken(), 0)

    def share(self, spare: int, ready: int) -> None:
        """With nothing ``ready`` to start, the ``spare`` slots to the running jobs, the
        fewest-threaded first, or to the running boards when no job runs; with items
        ready and fewer slots spare, the largest grants lowered by what the ready items
        lack, the boards' before the jobs'."""
        grant, used = self.cells[:, 0], self.cells[:, 1]
        lanes = [  # (not those told to stop, nor fixed ones)
            k for k in self._lane.values() if grant[k] > 0 and used[k] != RELEASED and k not in self._fixed
        ]
        if not lanes:
            return
        if ready == 0:
            takers = [k for k in lanes if k in self._jobs] or lanes
            for _ in range(max(spare, 0)):
                grant[min(takers, key=lambda k: grant[k])] += 1
            return
        for _ in range(ready - max(spare, 0)):
            k = max(lanes, key=lambda k: (k not in self._jobs, grant[k]))
            if grant[k] <= 1:
                k = max(lanes, key=lambda k: grant[k])
                if grant[k] <= 1:
                    break
            grant[k] -= 1


def _warm_up() -> None:
    time.sleep(0.2)  # busy long enough that each submit forks a new worker


def _drive(
    feed: Feed,
    submit,
    run_job,
    wait_some,
    cancel,
    slots: int | None = None,
    lanes: Lanes | None = None,
    board_lanes: bool = False,
    stop: Callable | None = None,
):
    """Submit records and jobs as the feed makes them ready, at most ``slots`` at a time
    (the feed keeps the rest in order), a job in as many slots as ``lanes`` grant it
    (``run_job(job, lane)``), a board too with ``board_lanes`` (``submit(record, lane)``;
    else ``submit(record, None)``, one slot); yield outcomes as boards finish, hand the
    ends of jobs back to the feed.  ``stop(job)`` asks a running job that nothing waits
    on any more to stop (default: through its lane).  Returns whether it stopped jobs
    unfinished (the feed ended past its ``last_start`` with only jobs running: ``cancel``
    ended them)."""
    if stop is None and lanes is not None:
        stop = lanes.stop
    pending: dict = {}  # future -> its job, or None for a board
    began: dict = {}  # a board's future -> when it was submitted
    laned: dict = {}  # a board's future -> its record, when it has a lane
    ended = False

    def busy() -> int:  # slots taken: a board without a lane one, the others their lanes' (one without lanes)
        if lanes is None:
            return len(pending)
        return lanes.taken() + sum(job is None and fut not in laned for fut, job in pending.items())

    try:
        while not ended or pending:
            if ended and pending and all(job is not None for job in pending.values()):
                cancel(pending)  # past the last start, no board running: nothing waits on these
                for job in pending.values():
                    feed.abandon(job)
                return True
            room = None if slots is None else slots - busy()
            items, ended = feed.take(limit=None if room is None else max(room, 0))  # (none: has it ended?)
            for item in items:
                if isinstance(item, Job):
                    pending[run_job(item, lanes.open(item) if lanes else None)] = item
                elif board_lanes and lanes is not None:
                    fut = submit(item, lanes.open(item))
                    pending[fut], began[fut], laned[fut] = None, time.time(), item
                else:
                    fut = submit(item, None)
                    pending[fut], began[fut] = None, time.time()
            for job in feed.give_up(slots or 1, [job for job in pending.values() if job is not None]):
                if stop is not None:
                    stop(job)  # its boards go on without it: it ends at its next chunk
            if lanes is not None:
                lanes.share(slots - busy(), feed.ready(slots))
            if pending:
                for fut in wait_some(pending):
                    job = pending.pop(fut)
                    if job is None:
                        feed.ended(time.time() - began.pop(fut))
                        if fut in laned:
                            lanes.close(laned.pop(fut))
                        yield fut.result()
                    else:
                        if lanes is not None:
                            lanes.close(job)
                        feed.job_done(job, fut.result)
    except BaseException:
        cancel(pending)
        raise
    return False


def _stop_pool(ex) -> None:
    """Stop at once: cancel what waits and end the workers (their boards are not journalled,
    so a resumed run solves them again).  Left alive, workers would run the boards already
    handed to them to their limits, and the interpreter's exit would wait for them."""
    processes = list((getattr(ex, "_processes", None) or {}).values())  # CPython keeps the workers here
    ex.shutdown(wait=False, cancel_futures=True)
    for p in processes:
        p.kill()  # not terminate: a worker forked from the CLI turns SIGTERM into KeyboardInterrupt


def _run_job_here(feed: Feed, job: Job) -> None:
    """``job`` in this process on every core, in a thread of its own while this one
    watches the feed: past its last start, or once the records waiting on it stop waiting
    (:meth:`Feed.give_up`), the job is told to stop through its grant and ends at its next
    chunk, so a budget holds with one worker too."""
    share = Share(grant=np.array([usable_cores()], dtype=np.int64), used=np.zeros(1, dtype=np.int64))
    ended: list = []

    def run() -> None:
        try:
            ended.append((job.fn(*job.args, threads=share), None))
        except BaseException as exc:  # noqa: BLE001 - handed to the feed below
            ended.append((None, exc))

    thread = threading.Thread(target=run, name="slidepdb-build", daemon=True)
    thread.start()
    late = False
    try:
        while thread.is_alive():
            thread.join(WATCH)
            if not share.stopped and ((late := feed._too_late()) or feed.give_up(1, [job])):
                share.stop()
    except BaseException:
        share.stop()  # interrupted: the build stops at its next chunk, publishing nothing
        raise
    value, error = ended[0]
    if late and error is not None:
        feed.abandon(job)
        return

    def result():
        if error is not None:
            raise error
        return value

    feed.job_done(job, result)


def _local_outcomes(feed: Feed, pools: Pools, time_limit, node_limit, fallback, workers, progress=None, known=None):
    known = known or {}
    import multiprocessing as mp
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    if workers <= 1 or (feed.size <= 1 and not feed.jobs):
        # several boards want the kernel anyway: no plain-Python first search (solver.search.first_nodes)
        pool = pools.pool(python_first=feed.size <= 1, progress=progress)
        ended = False
        while not ended:
            items, ended = feed.take(limit=1)
            for item in items:
                if isinstance(item, Job):  # nothing runs beside it: every core
                    _run_job_here(feed, item)
                else:
                    yield solve_record(
                        item,
                        pool,
                        time_limit=time_limit,
                        node_limit=node_limit,
                        fallback=fallback,
                        known=known.get(item.index),
                    )
        return
    ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else None
    lanes = Lanes(workers, ctx)
    ex = ProcessPoolExecutor(workers, mp_context=ctx, initializer=_worker_init, initargs=(pools, lanes.raw))
    try:
        wait([ex.submit(_warm_up) for _ in range(workers)])  # every worker forked at once, before any job
        stopped = yield from _drive(
            feed,
            lambda rec, lane: ex.submit(
                _worker_solve, rec, time_limit, node_limit, fallback, known.get(rec.index), lane
            ),
            lambda job, lane: ex.submit(_worker_job, job.fn, job.args, lane),
            lambda pending: wait(pending, timeout=0.2, return_when=FIRST_COMPLETED).done,
            lambda pending: _stop_pool(ex),
            slots=workers,
            lanes=lanes,
            board_lanes=pools.grow and pools.threads == 1,  # (a count asked for: that many, fixed)
        )
    except BaseException:
        _stop_pool(ex)  # stopped (an interrupt, an error, the caller closing us): ended, never awaited
        raise
    if not stopped:
        ex.shutdown(wait=True)
