"""What a run and every batch of boards it solves are both asked (:class:`Settings`): a
value below the run's planners and executors alike, read by both."""

from __future__ import annotations

from dataclasses import dataclass

from .clock import SYSTEM, Clock


@dataclass
class Settings:
    """What a run and each batch of boards it solves are both asked (``slidepdb run``'s
    :class:`~solver.run.options.RunOptions` and :func:`~solver.run.batch.run_batch`'s
    :class:`~solver.run.batch.BatchOptions` are each one): the database folder, the
    file's L R U D move limits, each board's seconds and nodes and whether a search
    that ends without an answer falls back to a bounded one, the workers (this machine's
    processes, or a dask cluster's at ``scheduler``), whether an earlier run's journal
    is kept, what is called with each final outcome, and the clock
    (:mod:`solver.run.clock`)."""

    db_dir: object = None
    limits: object = None
    time_limit: object = None
    node_limit: int | None = None
    fallback: bool = True
    workers: int = 1
    scheduler: object = None
    resume: bool = False
    on_outcome: object = None
    clock: Clock = SYSTEM
