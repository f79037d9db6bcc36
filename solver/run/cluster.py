"""Boards and builds on a dask.distributed cluster (``--scheduler ADDRESS``).

The parent hands boards and build jobs to the cluster as the feed makes them ready, as
many at once as the cluster has threads (:func:`dask_outcomes`); the cluster places
them.  Each worker process keeps the grants of the tasks it runs (:class:`WorkerLanes`,
the same :class:`~solver.run.lanes.Lanes` the parent keeps for its local workers): a
task holds one of the worker's threads, the threads no task holds go to the worker's
running builds, the fewest-threaded first, or to its running boards when it runs no
build, and a task that starts takes them back, the boards' extra threads first.  So a
build that every board waits on runs on every thread of its worker while the boards
wait.  A build that nothing waits on any more is told to stop through ``Client.run``;
it ends at its next chunk, as a local one does.  The last boards (no more left than the
cluster has workers) split their large iterations over every worker, as ``solve
--split`` does (:mod:`solver.search.processes`).

Where workers have a memory limit (dask's default: the machine's memory shared between
its worker processes; dask pauses a worker at 80% of it and restarts it at 95%), the
parent places each build itself (:class:`WorkerMemory`): on a worker whose running
builds leave room for its BFS arrays, the least busy first; a build that fits no
worker waits until no build runs, and is said in a warning.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import replace
from pathlib import Path

from pdb_builder.formats import Record

from ..api import solve_record
from ..distributed import connected, worker_threads
from ..distributed import workers as dask_workers
from ..outcome import Outcome
from .clock import SYSTEM
from .drive import Pools, drive, limit_of, solve_in_worker
from .feed import Feed
from .lanes import Lanes, lane_share

log = logging.getLogger("slidepdb")

# the share of a dask worker's memory limit its running builds' BFS arrays may hold (the
# boards beside them need the rest, for their tables and searches)
WORKER_BUILD_SHARE = 0.5
POLL = 0.1  # seconds between a worker's looks at its tasks' threads while any runs

_POOLS = threading.local()  # each dask thread's searchers, kept between its tasks
_WORKERS: dict[str, WorkerLanes] = {}  # a worker's address -> its lanes (several workers may share a process)
_WORKERS_LOCK = threading.Lock()


class WorkerLanes:
    """The thread grants of the tasks one dask worker runs, among its ``slots`` threads
    (:meth:`Lanes.balance`: nobody here knows what the cluster will send next, so every
    start and end rebalances, and a watcher thread does so every :data:`POLL` seconds
    while tasks run, as threads above a lowered grant stop)."""

    def __init__(self, slots: int):
        self.slots = max(1, slots)
        self.lanes = Lanes(2 * self.slots + 2)  # (a worker runs at most ``slots`` tasks at once)
        self._lock = threading.Lock()
        self._keys: dict[str, str] = {}  # a running task's key -> the key object its lane is filed under
        self._watcher: threading.Thread | None = None

    def enter(self, key: str, job: bool, fixed: int | None = None):
        """A lane for task ``key`` (a build job, or a board), and the
        :class:`~pdb_builder.cores.Share` of threads it may run; None when every lane is
        taken (it runs on one thread, or ``fixed``)."""
        with self._lock:
            if self.lanes.full:
                return None
            self._keys[key] = key
            lane = self.lanes.open(key, job=job, fixed=fixed)
            self.lanes.balance(self.slots)
            if self._watcher is None:
                self._watcher = threading.Thread(target=self._watch, name="slidepdb-lanes", daemon=True)
                self._watcher.start()
            return lane_share(self.lanes.cells, lane)

    def leave(self, key: str) -> None:
        with self._lock:
            item = self._keys.pop(key, None)
            if item is not None:
                self.lanes.close(item)
                self.lanes.balance(self.slots)

    def stop(self, key: str) -> bool:
        """Tell task ``key``, a build, to stop at its next chunk; False if it does not run here."""
        with self._lock:
            item = self._keys.get(key)
            if item is not None:
                self.lanes.stop(item)
            return item is not None

    def _watch(self) -> None:
        while True:
            SYSTEM.sleep(POLL)  # (a watcher on a worker: the machine's clock)
            with self._lock:
                if not self._keys:
                    self._watcher = None
                    return
                self.lanes.balance(self.slots)


def worker_lanes(worker) -> WorkerLanes:
    """The lanes of dask worker ``worker`` (made at its first task)."""
    with _WORKERS_LOCK:
        lanes = _WORKERS.get(worker.address)
        if lanes is None:
            lanes = _WORKERS[worker.address] = WorkerLanes(worker.state.nthreads)
        return lanes


def _in_lane(run, job: bool, fixed: int | None = None):
    """``run(threads)`` in a lane of this dask worker: ``threads`` a Share that follows the
    worker's idle threads, or ``fixed`` (a count, held in the lane and never changed), or
    1 when every lane is taken."""
    from distributed import get_worker

    worker = get_worker()
    lanes = worker_lanes(worker)
    key = worker.get_current_task()
    share = lanes.enter(key, job, fixed)
    try:
        return run(fixed if fixed is not None else share or 1)
    finally:
        lanes.leave(key)


def _dask_job(fn, args):
    """A build job as a dask task: ``fn(*args, threads=...)`` on the threads its worker's lanes grant."""
    return _in_lane(lambda threads: fn(*args, threads=threads), job=True)


def _dask_solve(rec: Record, pools: Pools, time_limit, node_limit, fallback, known=None, split=False) -> Outcome:
    """A board as a dask task, with a per-thread pool of searchers kept between tasks; a
    board given one thread takes its worker's idle threads too (``pools.grow``).
    ``split``: its large iterations are searched over every worker of the cluster
    (:meth:`solver.search.processes.Workers.cluster`), its own thread leaving its
    worker's pool while it waits on them."""
    made = getattr(_POOLS, "pools", None)
    if made is None:
        made = _POOLS.pools = {}
    if pools not in made:
        made[pools] = pools.pool()
    pool = made[pools]
    if split:
        from distributed import worker_client

        from ..search.processes import Workers

        with worker_client() as client:
            workers = Workers.cluster(client)
            return solve_record(rec, pool, time_limit, node_limit, fallback, threads=workers, known=known)
    fixed = None if pools.grow and pools.threads == 1 else pools.threads
    return _in_lane(
        lambda threads: solve_in_worker(rec, pool, time.thread_time, time_limit, node_limit, fallback, threads, known),
        job=False,
        fixed=fixed,
    )


def _stop_task(key: str, dask_worker=None) -> bool:
    """(``Client.run`` on every worker) tell task ``key`` to stop where it runs."""
    lanes = _WORKERS.get(dask_worker.address)
    return lanes is not None and lanes.stop(key)


def cluster_threads(scheduler) -> int:
    """How many boards a dask cluster (an address or a Client) solves at once: its
    workers' threads together."""
    with connected(scheduler) as client:
        return worker_threads(dask_workers(client))


def _room(limit) -> int | None:
    return int(WORKER_BUILD_SHARE * limit) if limit else None


class WorkerMemory:
    """The BFS memory of the builds the parent placed on each dask worker, against what each
    may hold: :data:`WORKER_BUILD_SHARE` of its memory limit (a worker without a limit:
    any amount).  ``workers``: the scheduler's record of each worker (address -> its
    ``memory_limit`` and ``nthreads``); ``busy()``: address -> the tasks each runs or
    holds.  The feed asks :meth:`fits` before it hands a build out, calls :meth:`take`
    as it does and :meth:`free` as the build ends (:attr:`solver.run.feed.Feed.places`)."""

    def __init__(self, workers: dict, busy=dict):
        self.nthreads = {a: max(1, int(w.get("nthreads") or 1)) for a, w in workers.items()}
        self.room = {a: _room(w.get("memory_limit")) for a, w in workers.items()}
        self.held = dict.fromkeys(workers, 0)
        self.busy = busy
        self._at: dict[int, str] = {}  # id(job) -> the worker it was placed on, until it ends
        self.warned = False

    @property
    def limited(self) -> bool:
        """Whether any worker has a memory limit (without: dask places the builds)."""
        return any(r is not None for r in self.room.values())

    def _left(self, addr: str) -> float:
        room = self.room[addr]
        return float("inf") if room is None else room - self.held[addr]

    def fits(self, job) -> bool:
        """Whether some worker has room for ``job``'s BFS memory now."""
        return any(self._left(a) >= job.memory for a in self.room)

    def take(self, job) -> None:
        """Place ``job`` and count its memory there: among the workers with room for it,
        the one with the fewest tasks a thread, then the most room left; where none has
        room (it runs alone), the one with the most room, and a warning says so."""
        fit = [a for a in self.room if self._left(a) >= job.memory]
        if fit:
            busy = self.busy()
            addr = min(fit, key=lambda a: (len(busy.get(a, ())) / self.nthreads[a], -self._left(a)))
        else:
            addr = max(self.room, key=lambda a: (self.room[a] is None, self.room[a] or 0))
            if not self.warned:
                self.warned = True
                log.warning(
                    "a build needs %.1f GB of BFS memory; the dask workers' memory limits leave a build "
                    "%.1f GB at most (half a limit: dask pauses a worker at 80%% of its limit and restarts "
                    "it at 95%%): start fewer workers a machine, or workers with --memory-limit 0",
                    job.memory / 1e9,
                    (self.room[addr] or 0) / 1e9,
                )
        self.held[addr] += job.memory
        self._at[id(job)] = addr

    def where(self, job) -> str | None:
        """The worker ``job`` was placed on (None: not placed)."""
        return self._at.get(id(job))

    def free(self, job) -> None:
        """``job`` ended: its memory is free again."""
        addr = self._at.pop(id(job), None)
        if addr is not None:
            self.held[addr] -= job.memory


def dask_outcomes(feed: Feed, pools: Pools, time_limit, node_limit, fallback, scheduler, known=None):
    """Outcomes of the feed's boards, solved on the cluster at ``scheduler`` as they finish
    (the feed's jobs run there too).  A board that starts when no more boards are left
    than the cluster has workers searches its large iterations on them all (``split``),
    so the last boards of a run do not keep one worker each while the others idle."""
    known = known or {}
    if pools.db_dir is not None:
        pools = replace(pools, db_dir=str(Path(pools.db_dir).resolve()))
    with connected(scheduler) as client:
        yield from _on_cluster(client, feed, pools, time_limit, node_limit, fallback, known)


def _on_cluster(client, feed: Feed, pools: Pools, time_limit, node_limit, fallback, known):
    # builds hold at most half of the cluster's threads at once, so boards that wait on no
    # build always have threads to start on (a worker's idle threads still go to its builds)
    workers = dask_workers(client)
    slots = worker_threads(workers)
    feed.max_jobs = max(1, slots // 2)
    keys: dict[int, str] = {}  # id(job) -> its task's key
    memory = WorkerMemory(workers, busy=client.processing)
    if memory.limited:
        feed.places = memory

    def split() -> bool:
        """Whether the board about to start splits its large iterations over the whole
        cluster: no more boards are left (running or still to start, this one among
        them) than the cluster has workers, so a worker would idle once one ends (a
        board's threads are one worker's; split boards share every worker's threads);
        never with a fixed thread count a board."""
        return len(workers) > 1 and pools.grow and pools.threads == 1 and feed.unfinished <= len(workers)

    def submit(rec, lane):
        return client.submit(
            _dask_solve,
            rec,
            pools=pools,
            time_limit=limit_of(time_limit, rec, feed.clock.now()),
            node_limit=node_limit,
            fallback=fallback,
            known=known.get(rec.index),
            split=split(),
            pure=False,
        )

    def run_job(job, lane):
        addr = memory.where(job)
        if addr is None:
            fut = client.submit(_dask_job, job.fn, job.args, pure=False)
        else:  # (another worker only if that one has left the cluster)
            fut = client.submit(_dask_job, job.fn, job.args, pure=False, workers=[addr], allow_other_workers=True)
        keys[id(job)] = fut.key
        return fut

    def stop(job) -> None:
        try:
            client.run(_stop_task, keys[id(job)], on_error="ignore")
        except Exception:  # noqa: BLE001 - the cluster is gone or going: nothing left to stop
            pass

    def wait_some(pending):
        done = [f for f in pending if f.done()]
        if not done:
            feed.clock.sleep(0.05)
        return done

    def cancel(pending):
        for job in pending.values():
            if job is not None:
                stop(job)  # a running task is not ended by cancelling its future
        client.cancel(list(pending))

    yield from drive(feed, submit, run_job, wait_some, cancel, slots=slots, stop=stop)
