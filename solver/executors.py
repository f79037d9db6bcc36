"""Where boards are solved: local worker processes or a dask.distributed cluster,
fed as they become ready (:class:`Feed`), outcomes yielded as boards finish."""

from __future__ import annotations

import heapq
import threading
import time
from pathlib import Path

from pdb_builder.errors import (
    BoardError,
)
from pdb_builder.formats import Record

from .one_board import Outcome, SolverPool, solve_record

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


class Feed:
    """The records to solve, each as soon as it is ready, in the order of ``todo``.

    Records in ``held`` wait until ``prepare(release)`` (run in a background thread,
    e.g. building their databases) calls ``release(records)``; whatever is still
    held when ``prepare`` returns is released then.  After ``last_start`` (wall
    clock) no record is handed out and the feed ends.  A released record goes before
    every ready one that comes after it in ``todo`` (so a retry's order holds while
    databases build), which is why the local executor takes only as many as it can start.
    An error in ``prepare`` is raised in the caller's thread once the released boards
    are done.  The thread starts at :meth:`start`, which executors call once their
    worker processes are forked (a fork while another thread runs could copy a held lock)."""

    def __init__(self, todo, held=(), prepare=None, last_start: float | None = None):
        self.last_start = last_start  # wall clock (time.time()) after which no record starts: the feed ends
        self.error: BaseException | None = None
        self.size = len(todo)
        self._thread = None
        self._cv = threading.Condition()
        self._prepared = prepare is None
        held_set = set(held) if prepare is not None else set()
        waiting = {r.index: (k, r) for k, r in enumerate(todo) if r.index in held_set}
        # a heap of (position in todo, record); sorted, so a heap already
        self._ready: list = [(k, r) for k, r in enumerate(todo) if r.index not in waiting]
        if prepare is None:
            return

        def release(recs):
            with self._cv:
                for r in recs:
                    item = waiting.pop(r.index, None)
                    if item is not None:
                        heapq.heappush(self._ready, item)
                self._cv.notify_all()

        def run():
            try:
                prepare(release)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
                self.error = exc
            finally:
                release([r for _, r in waiting.values()])
                with self._cv:
                    self._prepared = True
                    self._cv.notify_all()

        self._thread = threading.Thread(target=run, name="slidepdb-prepare", daemon=True)

    @property
    def prepares(self) -> bool:
        """Whether records wait on a ``prepare`` thread."""
        return self._thread is not None

    def start(self) -> None:
        if self._thread is not None and self._thread.ident is None:  # not started yet
            self._thread.start()

    def _too_late(self) -> bool:
        return self.last_start is not None and time.time() > self.last_start

    def take(self, block: bool, limit: int | None = None):
        """Up to ``limit`` ready records, first in ``todo`` first (with ``block``, waits
        for at least one), and whether the feed has ended."""
        with self._cv:
            while block and not self._ready and not self._prepared and not self._too_late():
                self._cv.wait(None if self.last_start is None else max(self.last_start - time.time(), 0.01))
            if self._too_late():
                self._ready.clear()  # too late to start another: the feed ends (held records too)
                return [], True
            n = len(self._ready) if limit is None else min(limit, len(self._ready))
            out = [heapq.heappop(self._ready)[1] for _ in range(n)]
            ended = self._prepared and not self._ready
        if not out and ended and self.error is not None:
            raise self.error
        return out, ended and self.error is None


def _warm_up() -> None:
    time.sleep(0.2)  # busy long enough that each submit forks a new worker


def _drive(feed: Feed, submit, wait_some, cancel, slots: int | None = None):
    """Submit records as the feed makes them ready, at most ``slots`` at a time (the
    feed keeps the rest in order); yield outcomes as they finish."""
    pending: set = set()
    ended = False
    try:
        while not ended or pending:
            room = None if slots is None else slots - len(pending)
            if room is None or room > 0:
                recs, ended_now = feed.take(block=not pending and not ended, limit=room)
                ended = ended or ended_now
                pending.update(submit(r) for r in recs)
            if pending:
                for fut in wait_some(pending):
                    pending.discard(fut)
                    yield fut.result()
    except BaseException:
        cancel(pending)
        raise


def _stop_pool(ex) -> None:
    """Stop at once: cancel what waits and end the workers (their boards are not journalled,
    so a resumed run solves them again).  Left alive, workers would run the boards already
    handed to them to their limits, and the interpreter's exit would wait for them."""
    processes = list(getattr(ex, "_processes", {}).values())  # CPython keeps the workers here
    ex.shutdown(wait=False, cancel_futures=True)
    for p in processes:
        p.kill()  # not terminate: a worker forked from the CLI turns SIGTERM into KeyboardInterrupt


def _local_outcomes(feed: Feed, db_dir, use_db, time_limit, node_limit, fallback, workers, threads=1):
    import multiprocessing as mp
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    if workers <= 1 or (feed.size <= 1 and not feed.prepares):
        # several boards want the kernel anyway: no plain-Python first search (solver.quick)
        pool = SolverPool(db_dir, use_db=use_db, threads=threads, python_first=feed.size <= 1)
        feed.start()
        ended = False
        while not ended:
            recs, ended = feed.take(block=True, limit=1)
            for rec in recs:
                yield solve_record(rec, pool, time_limit=time_limit, node_limit=node_limit, fallback=fallback)
        return
    ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else None
    with ProcessPoolExecutor(
        workers, mp_context=ctx, initializer=_worker_init, initargs=(db_dir, use_db, True, threads)
    ) as ex:
        wait([ex.submit(_warm_up) for _ in range(workers)])  # every worker forked before the feed's thread runs
        feed.start()
        yield from _drive(
            feed,
            lambda rec: ex.submit(_worker_solve, rec, time_limit, node_limit, fallback),
            lambda pending: wait(pending, timeout=0.2, return_when=FIRST_COMPLETED).done,
            lambda pending: _stop_pool(ex),
            slots=workers,
        )


def _dask_outcomes(feed: Feed, db_dir, use_db, time_limit, node_limit, fallback, scheduler):
    try:
        from distributed import Client
    except ImportError:
        raise BoardError("--scheduler needs dask.distributed: pip install 'slidepdb[dask]'") from None
    if db_dir is not None:
        db_dir = str(Path(db_dir).resolve())
    try:
        client = scheduler if isinstance(scheduler, Client) else Client(scheduler, timeout=DASK_CONNECT_TIMEOUT)
    except OSError as exc:
        raise BoardError(f"--scheduler {scheduler}: cannot connect: {exc}") from None

    feed.start()

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
            wait_some,
            lambda pending: client.cancel(list(pending)),
        )
    finally:
        if client is not scheduler:
            client.close()
