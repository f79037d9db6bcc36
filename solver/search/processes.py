"""The backend of worker processes: this machine's, or a dask cluster's (:class:`Workers`).

Each window of an iteration's numbers (:mod:`solver.search.sources`) is a task: the parent
hands them out in the serial order, a few ahead of each worker, and gathers what each
ended with (:class:`Gather`: nodes, the smallest f over the threshold, a solution).  The
workers search (:mod:`solver.search.remote`); the parent only hands out numbers and adds
up.  With A*+IDA* each worker builds the parent's frontier once (the same nodes in the
same order, checked), and a window is a run of its open nodes.  What the workers search
must be what the parent would: a worker whose tables differ stops the search with
:class:`~solver.search.remote.WorkersDiffer`, and every walk that ends an iteration must
count the same numbers.

``Workers.local(n)`` forks ``n`` processes of this machine that inherit the parent's
searcher and automaton (the tables are memory-mapped, so they share one copy), and forks
them again when either changes; ``Workers.cluster(client)`` sends windows to a dask
cluster's workers (the same ``--scheduler`` ``slidepdb run`` takes), each of which opens
the tables of the same database folder once (:class:`~solver.search.remote.Recipe`).  A
limit stops handing out windows; those running end at their next slice (a fraction of a
second), so a node limit may be passed by those.
"""

from __future__ import annotations

import itertools
import queue
import time
import uuid
from typing import NamedTuple

import numpy as np

from pdb_builder.words import plural

from . import remote
from .limits import raise_if_stopping
from .remote import Window, WindowEnd, WorkersDiffer, search_window
from .sources import IterationEnd, IterationSpec, merged_counts, once
from .state import Backend
from .threads import ROOT

AHEAD = 2  # windows handed to each worker beyond the one it runs (its next window is there when it asks)


class IterationWindows(NamedTuple):
    """What one iteration's windows cost: their number, the workers' seconds in them (all
    added), the longest one's, and the iteration's wall seconds in the parent."""

    thresh: int
    windows: int
    busy: float
    longest: float
    wall: float


class Workers(Backend):
    """Where one board's windows run: ``count`` workers, each taking one window at a time,
    reached through ``submit(fn, window)`` (a future with ``add_done_callback``, ``result``
    and ``cancel``, as :mod:`concurrent.futures` and dask make them).  ``recipe``: whether
    a window must say how to open the tables (a cluster's workers), or the workers have the
    parent's searcher already (forked)."""

    def __init__(self, count: int, submit, recipe: bool, ready=None, close=None, where: str = "", begin=None):
        self.log: list[IterationWindows] = []  # every iteration they searched
        self.count = max(int(count), 1)
        self.submit = submit
        self.recipe = recipe
        self._ready = ready
        self._begin = begin
        self._close = close
        self.where = where

    def iteration(self, searcher, board, spec: IterationSpec, source=ROOT) -> IterationEnd:
        """One iteration of ``board``'s search (``spec``) from ``source``
        (:class:`~solver.search.threads.RootSplit` or :class:`~solver.search.frontier.FrontierRun`),
        its windows handed out in the serial order, a few ahead of each worker, and what
        each ended with gathered (:class:`Gather`)."""
        if self.recipe and searcher.recipe is None:
            raise ValueError("a cluster's workers need the recipe of the searcher's tables")
        K = _kernel()
        deal = source.on_workers(self.count, spec, K.INF)
        self.ready(searcher, spec.fsm)
        stop, end_iteration = self.begin()
        iteration, recipe = uuid.uuid4().hex, searcher.recipe if self.recipe else None
        board_part = (iteration, recipe, board.cells, spec.thresh, spec.weight, spec.bpmx, deal.split, spec.fsm.depth)
        gather = Gather(self, spec, deal, remote.fingerprint(searcher, spec.fsm, searcher.root_state(board).h0))

        def hand_out():
            while len(gather.pending) < self.count * (1 + AHEAD) and (got := deal.windows.take()) is not None:
                window = Window(*board_part, spec.max_depth, *got, stop, deal.frontier)
                future = self.submit(search_window, window)
                gather.pending[future] = window
                future.add_done_callback(gather.done.put)

        try:
            hand_out()
            while gather.pending and gather.next_end(K):
                hand_out()
        finally:
            end_iteration()
            for f in gather.pending:
                f.cancel()
        return gather.end(self)

    def begin(self):
        """An iteration starts: what its windows carry to learn when it ends, and the call
        that ends it (its windows still running stop at their next slice)."""
        if self._begin is None:
            return (), lambda: None
        return self._begin()

    def ready(self, searcher, fsm) -> None:
        """Before the windows of an iteration searched with ``searcher`` and ``fsm``."""
        if self._ready is not None:
            self._ready(searcher, fsm)

    def close(self) -> None:
        if self._close is not None:
            self._close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @classmethod
    def local(cls, processes: int) -> Workers:
        """``processes`` worker processes of this machine, forked from this one as an
        iteration needs them (again when its searcher or automaton changes: the children
        inherit both, and the memory-mapped tables are shared)."""
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        held = {"pool": None, "key": None}
        live = np.frombuffer(mp.get_context("fork").RawArray("q", 1), dtype=np.int64)  # (shared with the children)
        numbers = itertools.count(1)

        def begin():
            live[0] = n = next(numbers)
            return ("number", n), lambda: live.__setitem__(0, 0)

        def ready(searcher, fsm):
            key = held["key"]
            if key is not None and key[0] is searcher and key[1] is fsm:
                return
            close()
            remote.inherit(searcher, fsm, live)  # what the children inherit
            held["pool"] = ProcessPoolExecutor(processes, mp_context=mp.get_context("fork"))
            held["key"] = (searcher, fsm)

        def submit(fn, window):
            return held["pool"].submit(fn, window)

        def close():
            if held["pool"] is not None:
                held["pool"].shutdown(wait=True, cancel_futures=True)
            held["pool"] = held["key"] = None
            remote.inherit(None)

        where = f"on {plural(processes, 'process', 'processes')}"
        return cls(processes, submit, recipe=False, ready=ready, close=close, where=where, begin=begin)

    @classmethod
    def cluster(cls, client) -> Workers:
        """A dask cluster's workers (a ``distributed.Client``): as many windows at once as
        they have threads."""
        from ..distributed import worker_threads, workers

        record = workers(client)
        threads, count = worker_threads(record), len(record)

        sent = {"fsm": None, "future": None}

        def ready(searcher, fsm):
            if sent["fsm"] is not fsm:  # sent once to every worker (up to 128 MB; learning it takes seconds)
                sent["future"] = client.scatter(fsm, broadcast=True, hash=False)
                sent["fsm"] = fsm

        def submit(fn, window):
            return client.submit(fn, window, sent["future"], pure=False)

        def begin():
            from distributed import Event

            event = Event(f"slidepdb-{uuid.uuid4().hex}", client=client)
            return ("event", event.name), event.set

        where = f"on {plural(count, 'dask worker')}"
        return cls(threads, submit, recipe=True, ready=ready, where=where, begin=begin)


class Gather:
    """What one iteration's windows ended with, gathered in the parent as they end: the
    nodes (the walks above the split depth counted once), the least f pruned, a solution,
    whether a limit stopped it; a worker that searched another tree is refused."""

    def __init__(self, workers: Workers, spec: IterationSpec, deal, expected: tuple):
        self.spec, self.deal, self.expected = spec, deal, expected + deal.fingerprint
        self.t0 = time.perf_counter()
        self.done: queue.Queue = queue.Queue()
        self.pending: dict = {}  # future -> its window
        self.walks: dict = {}  # walk id -> (its nodes above the split depth, per depth counts)
        self.nodes = self.expanded = 0
        self.next = deal.beyond
        self.windows, self.busy, self.longest = 0, 0.0, 0.0
        self.moves = None
        self.limited = False

    def next_end(self, K) -> bool:
        """Take in the next window that ends (within half a second): False when the
        iteration ends with it (a solution, a limit; every number met ends it once
        nothing is pending)."""
        raise_if_stopping()
        deadline, node_limit = self.spec.deadline, self.spec.node_limit
        wait = 0.5 if deadline is None else min(max(deadline - time.perf_counter(), 0.0), 0.5)
        try:
            future = self.done.get(timeout=wait)
        except queue.Empty:
            self.limited = deadline is not None and time.perf_counter() >= deadline
            return not self.limited
        if self.pending.pop(future, None) is None or future.cancelled():
            return True
        end: WindowEnd = future.result()
        if end.fingerprint != self.expected:
            raise WorkersDiffer(
                f"a worker searched {end.fingerprint} where the parent searches {self.expected} "
                "(another database folder or other tables)"
            )
        self.nodes += end.nodes
        self.expanded += end.expanded
        self.windows, self.busy = self.windows + 1, self.busy + end.seconds
        self.longest = max(self.longest, end.seconds)
        self.next = min(self.next, end.next)
        self.walks[end.walk] = (end.upper, end.counts)
        if end.status == K.FOUND:
            self.moves = end.moves
            return False
        if end.status == K.ITERATION_DONE:
            if not self.deal.windows.met(end.seen):
                raise WorkersDiffer(
                    f"two walks of one iteration met {self.deal.windows.end} and {end.seen} nodes "
                    f"at depth {self.deal.split}"
                )
            for f, window in list(self.pending.items()):
                if window.lo >= end.seen and f.cancel():  # nothing there: never started
                    self.pending.pop(f)
        if node_limit is not None and self.spec.nodes_before + self._once(0) >= node_limit:
            self.limited = True
        elif deadline is not None and time.perf_counter() >= deadline:
            self.limited = True
        return not self.limited

    def _once(self, i: int) -> int:
        """Nodes generated (``i`` 0) or expanded (1), the walks above the split depth counted once."""
        return once(self.expanded if i else self.nodes, [u[i] for u, _ in self.walks.values()])

    def end(self, workers: Workers) -> IterationEnd:
        """How the iteration ended (logged with the workers' seconds in it)."""
        counts = np.zeros(self.spec.max_depth + 1, dtype=np.int64)
        if self.walks:
            counts = merged_counts(np.stack([c for _, c in self.walks.values()]), self.deal.split)
        status = "found" if self.moves is not None else "limit" if self.limited else "done"
        wall = round(time.perf_counter() - self.t0, 4)
        workers.log.append(
            IterationWindows(self.spec.thresh, self.windows, round(self.busy, 4), round(self.longest, 4), wall)
        )
        return IterationEnd(status, self._once(0), self._once(1), self.next, counts, self.moves, workers.count)


def _kernel():
    from . import kernel as K

    return K


def board_workers(processes: int | None = None, scheduler=None) -> Workers:
    """The workers of one board's search: ``processes`` of this machine, or the workers
    of the dask cluster at ``scheduler`` (an address or a ``distributed.Client``; a
    client opened here is closed with the workers).  OptionsError when the cluster
    cannot be reached (:func:`solver.distributed.connected`)."""
    if scheduler is None:
        return Workers.local(processes or 1)
    from contextlib import ExitStack

    from ..distributed import connected

    door = ExitStack()
    workers = Workers.cluster(door.enter_context(connected(scheduler)))
    workers._close = door.close
    return workers
