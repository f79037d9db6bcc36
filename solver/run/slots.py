"""Boards and builds in local worker processes: each worker maps the tables once and
keeps its compiled kernels; with one worker, everything in this process
(:func:`local_outcomes`, driven by :func:`solver.run.drive.drive`)."""

from __future__ import annotations

import threading
import time

import numpy as np

from pdb_builder.cores import Share, usable_cores
from pdb_builder.formats import Record

from ..api import SolverPool, solve_record
from ..outcome import Outcome
from ..search.limits import raise_if_stopping
from .clock import SYSTEM
from .drive import Pools, drive, limit_of, solve_in_worker
from .feed import Feed, Job
from .lanes import Lanes, lane_share

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
    return solve_in_worker(rec, _WORKER_POOL, time.process_time, time_limit, node_limit, fallback, threads, known)


def _warm_up(worker: int, workers: int, cold: list[int]) -> None:
    """Busy long enough that each submit forks a new worker; on a cold start, this
    worker's share of the kernels compiled (:mod:`solver.run.warm`)."""
    t = SYSTEM.tick()
    if cold:
        from .warm import warm_up

        warm_up(worker, workers, cold)
    SYSTEM.sleep(max(0.0, 0.2 - (SYSTEM.tick() - t)))


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


def local_outcomes(feed: Feed, pools: Pools, time_limit, node_limit, fallback, workers, progress=None, known=None):
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
                        time_limit=limit_of(time_limit, item, feed.clock.now()),
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
        stopped = yield from drive(
            feed,
            lambda rec, lane: ex.submit(
                _worker_solve,
                rec,
                limit_of(time_limit, rec, feed.clock.now()),
                node_limit,
                fallback,
                known.get(rec.index),
                lane,
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
