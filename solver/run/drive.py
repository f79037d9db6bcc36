"""The loop both executors share (local worker processes, :mod:`solver.run.slots`; a dask
cluster, :mod:`solver.run.cluster`): items from the feed to the workers as slots free,
outcomes back as boards finish (:func:`drive`), and what every worker makes its
searchers from (:class:`Pools`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..api import SolverPool, solve_record
from ..outcome import Outcome
from ..search.limits import raise_if_stopping
from .clock import SYSTEM
from .feed import Feed, Job
from .lanes import Lanes


@dataclass(frozen=True)
class Pools:
    """How each process (or dask thread) that solves boards makes its
    :class:`~solver.api.SolverPool`: the database folder, whether to read it, each
    board's threads, ``go_on`` (a table that cannot be read is left out),
    ``grow``: a board given one thread takes the idle slots too (local processes), and
    ``frontier`` (A*+IDA*, :mod:`solver.search.frontier`)."""

    db_dir: object = None
    use_db: bool = True
    threads: int = 1
    go_on: bool = False
    grow: bool = True
    frontier: int | None = None  # A*+IDA*'s open nodes (0: IDA* alone; None: the searcher's default)

    def pool(self, **kw) -> SolverPool:
        kw = {"threads": self.threads, "go_on": self.go_on, "frontier": self.frontier, **kw}
        return SolverPool(self.db_dir, use_db=self.use_db, **kw)


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


def solve_in_worker(rec, pool: SolverPool, clock, time_limit, node_limit, fallback, threads, known) -> Outcome:
    """A board as a worker solves it, a local process's or a dask worker's thread:
    :func:`~solver.api.solve_record` on the worker's pool, with the part of a core it had
    (``clock``: its process's or its thread's CPU time, :func:`with_cpu_share`)."""
    return with_cpu_share(
        clock,
        lambda: solve_record(
            rec, pool, time_limit=time_limit, node_limit=node_limit, fallback=fallback, threads=threads, known=known
        ),
    )


def limit_of(time_limit, rec, now: float):
    """A board's time limit: ``time_limit``, or what it says for ``rec`` starting at ``now``
    (the executor's clock) when it decides each board's as it starts
    (:class:`~solver.run.steps.Deciding`, which a step's limit rule makes as the step
    starts: the rules read no clock)."""
    return time_limit(rec, now) if callable(time_limit) else time_limit


def drive(
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
                    pending[run_job(item, lanes.open(item, job=True) if lanes else None)] = item
                elif board_lanes and lanes is not None:
                    fut = submit(item, lanes.open(item, job=False))
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
