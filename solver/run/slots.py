"""Where boards are solved: local worker processes or a dask.distributed cluster,
fed as they become ready (:class:`Feed`), outcomes yielded as boards finish."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from pdb_builder.cores import Share, usable_cores
from pdb_builder.formats import Record

from ..api import SolverPool, solve_record
from ..outcome import Outcome
from ..search.limits import raise_if_stopping
from .clock import SYSTEM
from .feed import Feed, Job
from .lanes import Lanes, lane_share

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


def _lane_share(lane: int) -> Share:
    return lane_share(_LANES, lane)


def _worker_job(fn, args, lane: int):
    """A job in a worker: ``fn`` on the threads its lane grants."""
    return fn(*args, threads=_lane_share(lane))


def _worker_solve(rec: Record, time_limit, node_limit, fallback, known=None, lane: int | None = None) -> Outcome:
    """A board in a worker: its optimal search on the threads its lane grants (one unless
    slots are idle: :meth:`Lanes.share`)."""
    threads = None if lane is None else _lane_share(lane)
    return with_cpu_share(
        time.process_time,
        lambda: solve_record(
            rec,
            _WORKER_POOL,
            time_limit=time_limit,
            node_limit=node_limit,
            fallback=fallback,
            threads=threads,
            known=known,
        ),
    )


def with_cpu_share(clock, solve) -> Outcome:
    """``solve()``'s outcome with ``cpu_share``: the part of a core its process (or thread:
    ``clock``) had while it ran, when it ran on one thread: under 1 on a machine whose
    cores other programs use too (:func:`solver.run.answer_pass.machine_share`)."""
    wall, cpu = SYSTEM.tick(), clock()  # (in a worker: the machine's clock)
    out = solve()
    wall = SYSTEM.tick() - wall
    if wall > 0 and out.threads is None:
        out.cpu_share = round(min(1.0, (clock() - cpu) / wall), 3)
    return out


def limit_of(time_limit, rec):
    """A board's time limit: ``time_limit``, or what it says for ``rec`` when it decides
    each board's as it starts (:class:`solver.run.answer_pass.AnswerLimit`)."""
    return time_limit(rec) if callable(time_limit) else time_limit


def _warm_up(worker: int, workers: int, cold: list[int]) -> None:
    """Busy long enough that each submit forks a new worker; on a cold start, this
    worker's share of the kernels compiled (:mod:`solver.run.warm`)."""
    t = SYSTEM.tick()
    if cold:
        from .warm import warm_up

        warm_up(worker, workers, cold)
    SYSTEM.sleep(max(0.0, 0.2 - (SYSTEM.tick() - t)))


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
            raise_if_stopping()  # a stop whose exception Python dropped (one raised inside a fork's hooks)
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
                    pending[fut], began[fut], laned[fut] = None, feed.clock.now(), item
                else:
                    fut = submit(item, None)
                    pending[fut], began[fut] = None, feed.clock.now()
            for job in feed.give_up(slots or 1, [job for job in pending.values() if job is not None]):
                if stop is not None:
                    stop(job)  # its boards go on without it: it ends at its next chunk
            if lanes is not None:
                lanes.share(slots - busy(), feed.ready(slots))
            if pending:
                for fut in wait_some(pending):
                    job = pending.pop(fut)
                    if job is None:
                        feed.ended(feed.clock.now() - began.pop(fut))
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
            raise_if_stopping()
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
            raise_if_stopping()
            items, ended = feed.take(limit=1)
            for item in items:
                if isinstance(item, Job):  # nothing runs beside it: every core
                    _run_job_here(feed, item)
                else:
                    began = feed.clock.now()
                    out = solve_record(
                        item,
                        pool,
                        time_limit=limit_of(time_limit, item),
                        node_limit=node_limit,
                        fallback=fallback,
                        known=known.get(item.index),
                    )
                    feed.ended(
                        feed.clock.now() - began
                    )  # (before the caller hears of it: the feed's count of what runs)
                    yield out
        return
    ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else None
    lanes = Lanes(workers, ctx)
    ex = ProcessPoolExecutor(workers, mp_context=ctx, initializer=_worker_init, initargs=(pools, lanes.raw))
    try:
        from .warm import cold_parts

        cold = cold_parts(bool(fallback))  # kernels numba's cache lacks: a share each worker, before any board
        wait([ex.submit(_warm_up, k, workers, cold) for k in range(workers)])  # every worker forked at once
        stopped = yield from _drive(
            feed,
            lambda rec, lane: ex.submit(
                _worker_solve, rec, limit_of(time_limit, rec), node_limit, fallback, known.get(rec.index), lane
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
