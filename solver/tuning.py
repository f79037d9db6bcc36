"""The solver's tuning: the numbers that decide how its work is cut up and tried (slices
between looks at the clock, windows handed to threads and worker processes, when a node
is shared, when A*+IDA* takes over, the fallback's steps, the searchers a pool keeps,
the run's first build rate and reserve), never what is proven.  One frozen value
(:class:`Tuning`), read where it is used (:func:`tuning`) and changed for a block of
code by :func:`tuned`, as ``dask.config.set`` and scikit-learn's ``config_context``
change theirs: the way the tests cut a small board's search as finely as a large one's
(``tune`` in ``tests/conftest.py``), never by patching a module's constant.  A worker
process forked while a block is tuned searches with that block's tuning."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, replace

from pdb_builder.patterns import BUILD_RATE


@dataclass(frozen=True)
class Tuning:
    # one thread (solver.search.searcher, frontier)
    slice_nodes: int = 2_000_000  # nodes per kernel call between looks at the clock
    # several threads (solver.search.threads)
    par_slice: int = 200_000  # nodes a thread searches between looks at the clock and the other threads
    split_min: int = 64  # nodes at the split depth, at least this many a thread
    window_nodes: int = 100_000  # nodes a window is planned to hold
    split2_factor: int = 16  # the second split depth holds at least this many times the first's nodes
    share_after: int = 200_000  # nodes a thread spends in one node at the split depth before it shares it
    share_threads: int = 4  # nodes are shared on this many threads or more (on 2 the walks cost more than they save)
    # worker processes and dask workers (solver.search.processes)
    window_max_nodes: int = 2_000_000  # nodes a window is planned to hold at most (about 0.3 s of one core)
    window_min_nodes: int = 100_000  # and at least (against a fraction of a millisecond to hand it over)
    worker_slice: int = 1_000_000  # nodes a worker searches between looks at whether its iteration goes on
    # A*+IDA* (solver.search.frontier), the searcher's default where it was measured to pay
    frontier_after: int = 20_000_000  # an iteration of this many nodes on a wall-free 5x5 ...
    frontier_nodes: int = 1_000_000  # ... and the rest of the search keeps this many open nodes
    # one board (solver.api): a walled board no table serves is searched on Manhattan distance
    # for this many nodes at most (or LAYOUT_AFTER seconds) before its layout's tables are built
    layout_after_nodes: int = 20_000_000
    searchers: int = 8  # searchers (tables mapped, kernels ready) a pool keeps, the most recently used
    # the fallback (solver.fallback.ladder)
    fallback_weights: tuple = (150, 200, 300, 500, 1000)  # percent; weighted IDA*, in turn
    beam_widths: tuple = (1024, 4096, 16384)  # beam search, widening while time allows
    # a layout's full tables (LAYOUT_MEMORY) with this much search time left, or more, else small ones
    # (a 6x6 layout's two take 3 s: a ring retry at a limit of 3.2 s had no time left for the beam that answers)
    layout_seconds: float = 8.0
    # slidepdb run (solver.run)
    build_rate: float = BUILD_RATE  # entries a build makes a thread-second, until the run measures its machine
    reserve: float = 30.0  # seconds a budget keeps back for the outputs (less under a short one: planning.reserve_for)
    min_rate: float = 2e6  # nodes a second a forecast assumes at least (a slower measure is a kernel's load)


_current = Tuning()


def tuning() -> Tuning:
    """The tuning in force."""
    return _current


@contextmanager
def tuned(**changes):
    """The tuning in force with ``changes`` (fields of :class:`Tuning`) for the block."""
    global _current
    before = _current
    _current = replace(before, **changes)
    try:
        yield _current
    finally:
        _current = before
