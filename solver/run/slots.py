"""Where boards are solved: local worker processes or a dask.distributed cluster,
fed as they become ready (:class:`Feed`), outcomes yielded as boards finish."""

from __future__ import annotations

import heapq
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pdb_builder.errors import (
    BoardError,
)
from pdb_builder.formats import Record

from ..api import SolverPool, solve_record
from ..outcome import Outcome
from ..search.limits import interrupt_if_stopping

# -- many boards -----------------------------------------------------------------------------
#
# Executors: the solving of many boards goes through ``_local_outcomes`` or
# ``_dask_outcomes``, generators that yield outcomes as boards finish.  Local processes by default (each maps the tables
# once and keeps its compiled kernels); a dask.distributed cluster when a
# scheduler address is given (its workers must see the same database folder).

_WORKER_POOL: SolverPool | None = None


def _worker_init(db_dir, use_db, verify, threads=1):
    global _WORKER_POOL
    import signal

    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the parent decides when a batch stops
    # Ctrl-C on a terminal signals the whole process group: the parent stops the batch and
    # ends its workers; a worker interrupted itself could die halfway through sending a
    # result, and the pool's thread would wait for the rest of it for ever
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _WORKER_POOL = SolverPool(db_dir, use_db=use_db, verify=verify, threads=threads)


def _worker_solve(rec: Record, time_limit, node_limit, fallback) -> Outcome:
    return solve_record(rec, _WORKER_POOL, time_limit=time_limit, node_limit=node_limit, fallback=fallback)


_DASK_POOLS = threading.local()
DASK_CONNECT_TIMEOUT = "20s"


def _dask_solve(rec: Record, db_dir, use_db, time_limit, node_limit, fallback) -> Outcome:
    """A Dask task: one board, with a per-thread pool of searchers kept between tasks."""
    pools = getattr(_DASK_POOLS, "pools", None)
    if pools is None:
        pools = _DASK_POOLS.pools = {}
    key = (str(db_dir), use_db)
    if key not in pools:
        pools[key] = SolverPool(db_dir, use_db=use_db)
    return solve_record(rec, pools[key], time_limit=time_limit, node_limit=node_limit, fallback=fallback)


@dataclass(eq=False)
class Job:
    """Work some records wait on (a database build, :mod:`solver.run.pipeline`), run where
    the boards are solved, in a worker's slot: ``fn(*args, parallel=...)`` (picklable;
    ``parallel``: whether it may use every core, true only when nothing runs beside it).
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
    jobs' total past ``memory_cap`` wait (a record goes instead), unless no job runs.
    After ``last_start`` (wall clock) nothing more is handed out and the feed ends."""

    def __init__(self, todo, jobs=(), last_start: float | None = None, memory_cap: int | None = None):
        self.last_start = last_start  # wall clock (time.time()) after which no record starts: the feed ends
        self.memory_cap = memory_cap
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
        return self._running == 0 or self.memory_cap is None or self._memory + job.memory <= self.memory_cap

    def take(self, limit: int | None = None) -> tuple[list, bool]:
        """Up to ``limit`` records and jobs that can start, first in ``todo`` first, and
        whether the feed has ended (nothing left to hand out, no job running)."""
        if self._too_late():
            self._heap.clear()  # too late to start another: the feed ends (waiting records too)
            self._waiting.clear()
            return [], self._running == 0
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
                out.append(job)
            else:  # skipped: its records go on now
                self._release(job)
        for item in passed:
            heapq.heappush(self._heap, item)
        return out, not self._heap and not self._waiting and self._running == 0

    def job_done(self, job: Job, result: Callable) -> None:
        """``job`` ended: ``result()`` gives its value or raises what it raised (handed
        to ``job.done``: its records go on either way)."""
        try:
            value, error = result(), None
        except Exception as exc:  # noqa: BLE001 - the job's owner decides
            interrupt_if_stopping(exc)  # SIGTERM or Ctrl-C, which a library turned into another exception
            value, error = None, exc
        self._running -= 1
        self._memory -= job.memory
        job.done(value, error)
        self._release(job)

    def _release(self, job: Job) -> None:
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


def _warm_up() -> None:
    time.sleep(0.2)  # busy long enough that each submit forks a new worker


def _drive(feed: Feed, submit, run_job, wait_some, cancel, slots: int | None = None):
    """Submit records and jobs as the feed makes them ready, at most ``slots`` at a time
    (the feed keeps the rest in order); yield outcomes as boards finish, hand the
    ends of jobs back to the feed."""
    pending: dict = {}  # future -> its job, or None for a board
    ended = False
    try:
        while not ended or pending:
            room = None if slots is None else slots - len(pending)
            if room is None or room > 0:
                items, ended = feed.take(limit=room)
                for item in items:
                    if isinstance(item, Job):
                        pending[run_job(item)] = item
                    else:
                        pending[submit(item)] = None
            if pending:
                for fut in wait_some(pending):
                    job = pending.pop(fut)
                    if job is None:
                        yield fut.result()
                    else:
                        feed.job_done(job, fut.result)
    except BaseException:
        cancel(pending)
        raise


def _stop_pool(ex) -> None:
    """Stop at once: cancel what waits and end the workers (their boards are not journalled,
    so a resumed run solves them again).  Left alive, workers would run the boards already
    handed to them to their limits, and the interpreter's exit would wait for them."""
    processes = list((getattr(ex, "_processes", None) or {}).values())  # CPython keeps the workers here
    ex.shutdown(wait=False, cancel_futures=True)
    for p in processes:
        p.kill()  # not terminate: a worker forked from the CLI turns SIGTERM into KeyboardInterrupt


def _local_outcomes(feed: Feed, db_dir, use_db, time_limit, node_limit, fallback, workers, threads=1, progress=None):
    import multiprocessing as mp
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    if workers <= 1 or (feed.size <= 1 and not feed.jobs):
        # several boards want the kernel anyway: no plain-Python first search (solver.search.first_nodes)
        pool = SolverPool(db_dir, use_db=use_db, threads=threads, python_first=feed.size <= 1, progress=progress)
        ended = False
        while not ended:
            items, ended = feed.take(limit=1)
            for item in items:
                if isinstance(item, Job):  # nothing runs beside it: every core
                    feed.job_done(item, lambda job=item: job.fn(*job.args, parallel=True))
                else:
                    yield solve_record(item, pool, time_limit=time_limit, node_limit=node_limit, fallback=fallback)
        return
    ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else None
    ex = ProcessPoolExecutor(
        workers, mp_context=ctx, initializer=_worker_init, initargs=(db_dir, use_db, True, threads)
    )
    try:
        wait([ex.submit(_warm_up) for _ in range(workers)])  # every worker forked at once, before any job
        yield from _drive(
            feed,
            lambda rec: ex.submit(_worker_solve, rec, time_limit, node_limit, fallback),
            lambda job: ex.submit(job.fn, *job.args, parallel=False),  # one thread: a board or job runs beside it
            lambda pending: wait(pending, timeout=0.2, return_when=FIRST_COMPLETED).done,
            lambda pending: _stop_pool(ex),
            slots=workers,
        )
    except BaseException:
        _stop_pool(ex)  # stopped (an interrupt, an error, the caller closing us): ended, never awaited
        raise
    ex.shutdown(wait=True)


def cluster_threads(scheduler) -> int:
    """How many boards a dask cluster (an address or a Client) solves at once: its
    workers' threads together."""
    client = _dask_client(scheduler)
    try:
        return max(sum(client.nthreads().values()), 1)
    finally:
        if client is not scheduler:
            client.close()


def _dask_client(scheduler):
    try:
        from distributed import Client
    except ImportError:
        raise BoardError("--scheduler needs dask.distributed: pip install 'slidepdb[dask]'") from None
    if isinstance(scheduler, Client):
        return scheduler
    try:
        return Client(scheduler, timeout=DASK_CONNECT_TIMEOUT)
    except OSError as exc:
        raise BoardError(f"--scheduler {scheduler}: cannot connect: {exc}") from None


def _dask_outcomes(feed: Feed, db_dir, use_db, time_limit, node_limit, fallback, scheduler):
    if db_dir is not None:
        db_dir = str(Path(db_dir).resolve())
    client = _dask_client(scheduler)

    def wait_some(pending):
        done = [f for f in pending if f.done()]
        if not done:
            time.sleep(0.05)
        return done

    try:
        yield from _drive(
            feed,
            lambda rec: client.submit(
                _dask_solve,
                rec,
                db_dir=db_dir,
                use_db=use_db,
                time_limit=time_limit,
                node_limit=node_limit,
                fallback=fallback,
                pure=False,
            ),
            lambda job: client.submit(job.fn, *job.args, parallel=False, pure=False),  # one thread of a worker
            wait_some,
            lambda pending: client.cancel(list(pending)),
        )
    finally:
        if client is not scheduler:
            client.close()
