"""One driver over every pair of work source and backend (solver.search.driver): the root's
split depth and the A* part's open nodes, each on the caller's thread, two threads, two
worker processes and a backend that runs its windows in a scripted, shuffled order.  One
test body: every length equal to breadth-first search's, every answer a path to the goal,
on small shapes with and without walls (a cut vertex among them).  The tuning sends every
iteration past a few dozen nodes to the backend in windows of about one node, so small
boards hand out hundreds of windows."""

import random
import threading
from concurrent.futures import Future

import pytest

from pdb_builder.board import Board, Shape
from pdb_builder.moves import check_moves
from solver.search import remote
from solver.search.heuristic import manhattan_heuristic
from solver.search.processes import Workers
from solver.search.searcher import Searcher
from solver.search.state import Backend
from solver.search.threads import Threads

from .conftest import sample_states

# (the wall on cell 1 makes cells 3 and 5 cut vertices)
SHAPES = [Shape.devquiz(3, 3), Shape.korf(3, 3, [2]), Shape.devquiz(3, 3, [1]), Shape.korf(4, 2)]
SOURCES = {"root": None, "a-star-part": 6}  # Searcher.frontier: IDA* alone, or below 6 open nodes


class Shuffled:
    """An executor for :class:`~solver.search.processes.Workers` that runs the windows
    submitted to it on one thread of this process, each time the one a seeded generator
    picks among those waiting: the windows end in an order unlike the serial one, so walks
    start again from the root and numbers are met out of turn."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.waiting: list = []
        self.ran = 0
        self.cond = threading.Condition()
        self.closed = False
        threading.Thread(target=self._run, daemon=True).start()

    def submit(self, fn, window) -> Future:
        future = Future()
        with self.cond:
            self.waiting.append((future, fn, window))
            self.cond.notify()
        return future

    def _run(self) -> None:
        while True:
            with self.cond:
                while not self.waiting and not self.closed:
                    self.cond.wait()
                if self.closed:
                    return
                future, fn, window = self.waiting.pop(self.rng.randrange(len(self.waiting)))
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(fn(window))
                except BaseException as exc:  # noqa: BLE001 - the parent's to raise
                    future.set_exception(exc)
                self.ran += 1

    def close(self) -> None:
        with self.cond:
            self.closed = True
            self.cond.notify()


def shuffled(seed: int) -> Workers:
    """Two windows at a time (and their next ones waiting), in a shuffled order, searched by
    the parent's own searcher (what a forked worker inherits)."""
    ex = Shuffled(seed)
    workers = Workers(2, ex.submit, recipe=False, ready=lambda s, fsm: remote.inherit(s, fsm), close=ex.close)
    workers.executor = ex
    return workers


@pytest.fixture(scope="module")
def processes():
    with Workers.local(2) as workers:
        yield workers


@pytest.fixture
def windows(split, tune):
    """The ``split`` fixture's windows of one node, after 8 nodes of an iteration (even the
    small searches of a walled 3x3 go to the backend), and windows of about one node for
    worker processes too."""
    tune(slice_nodes=8, window_max_nodes=1, window_min_nodes=1, worker_slice=16)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.key)
@pytest.mark.parametrize("source", SOURCES, ids=str)
@pytest.mark.parametrize("backend", ["caller", "threads", "processes", "shuffled"])
def test_every_source_on_every_backend_proves_the_bfs_length(windows, request, shape, source, backend):
    dist, states = sample_states(shape, 6, seed=len(backend))
    s = Searcher(manhattan_heuristic(shape), frontier=SOURCES[source])
    s.python_first = False  # every board through the kernel
    where = {"caller": lambda: 1, "threads": lambda: Threads(2), "shuffled": lambda: shuffled(shape.n)}
    on = request.getfixturevalue("processes") if backend == "processes" else where[backend]()
    went = False
    for cells in states:
        board = Board(shape, cells)
        res = s.solve(board, threads=on)
        assert res.optimal and res.length == dist[cells], (str(board), res.length, dist[cells])
        assert check_moves(board, res.moves).ok
        went = went or res.threads == 2
    assert went == (backend != "caller"), "the iterations went elsewhere than asked"
    if backend == "shuffled":
        on.close()
        assert on.executor.ran > 10 and on.log  # windows went out, and ran out of order


def test_a_search_is_told_its_backend_by_type():
    """A thread count or a grant is this process's threads; a backend is itself; a
    cluster's backend that cannot open the searcher's tables gives way to threads."""
    s = Searcher(manhattan_heuristic(Shape.devquiz(3, 3)))
    assert isinstance(s.where(3), Threads) and s.where(3).count == 3 and s.where(1).alone
    own = shuffled(0)
    assert s.where(own) is own
    own.recipe = True  # a cluster's: the searcher has no recipe
    assert isinstance(s.where(own), Threads) and isinstance(s.where(own), Backend)
    own.close()
