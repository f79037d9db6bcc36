"""One board's iterations searched by worker processes (solver.search.processes):
lengths against breadth-first search, every completed iteration's nodes equal to the
threads' at the same split depth, workers with other tables refused, limits, a dask
cluster's workers opening the tables themselves, and ``solve --split``.  The ``windows``
fixture makes every iteration past a few dozen nodes go to the workers in windows of
about one node at the split depth, so small boards hand out hundreds of windows."""

import multiprocessing as mp
import sys
from concurrent.futures import ProcessPoolExecutor

import pytest
from click.testing import CliRunner

import solver.search.remote as remote
from pdb_builder.board import Board, Shape
from pdb_builder.make.building import build_pdb
from pdb_builder.moves import check_moves
from pdb_builder.patterns import named_partition
from solver.cli import main
from solver.search.heuristic import manhattan_heuristic
from solver.search.processes import Workers
from solver.search.remote import Recipe, WorkersDiffer
from solver.search.searcher import Searcher
from solver.search.tables import heuristic_for

from .conftest import sample_states

SHAPES = [Shape.devquiz(3, 3), Shape.korf(3, 3, [2]), Shape.devquiz(3, 3, [0]), Shape.korf(4, 2)]


@pytest.fixture
def windows(split, monkeypatch, tune):
    """The ``split`` fixture's small iterations, and windows of about one node each."""
    tune(window_max_nodes=1, window_min_nodes=1, worker_slice=16)
    return split


@pytest.fixture(scope="module")
def two():
    """Two worker processes of this machine, for the module's tests."""
    with Workers.local(2) as workers:
        yield workers


def _agree(searcher, shape, dist, states, workers) -> list:
    out = []
    for cells in states:
        board = Board(shape, cells)
        res = searcher.solve(board, threads=workers)
        assert res.optimal and res.length == dist[cells], (str(board), res.length, dist[cells])
        assert check_moves(board, res.moves).ok
        out.append(res)
    return out


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.key)
@pytest.mark.parametrize("prune", [2, 8])
def test_lengths_equal_bfs_on_two_processes(windows, two, shape, prune):
    """With the undo-only automaton and a deeper one (built again by no worker: the
    forked ones inherit it)."""
    dist, states = sample_states(shape, 10, seed=prune)
    results = _agree(Searcher(manhattan_heuristic(shape), prune=prune), shape, dist, states, two)
    assert any(r.threads == 2 for r in results), "no iteration went to the workers"


def test_completed_iterations_count_the_threads_nodes(windows, two, monkeypatch, tune):
    """Every number at the split depth searched once, the walks above it counted once:
    each completed iteration's nodes are those of two threads at the same split depth
    (no second split depth for the threads, which the workers never use)."""
    tune(share_threads=99)
    shape = Shape.korf(4, 2)
    dist, states = sample_states(shape, 4, seed=1)
    went = False
    for cells in states:
        board = Board(shape, cells)
        # (a searcher of each: a searcher's automaton deepens with the nodes its searches generated)
        on_workers = Searcher(manhattan_heuristic(shape)).solve(board, threads=two)
        on_threads = Searcher(manhattan_heuristic(shape)).solve(board, threads=2)
        assert on_workers.length == on_threads.length == dist[cells]
        assert [i[:2] for i in on_workers.iterations] == [i[:2] for i in on_threads.iterations]
        went = went or on_workers.threads == 2
    assert went, "no iteration went to the workers"


def test_a_worker_with_other_tables_stops_the_search(windows):
    """Workers that open the tables themselves (as a cluster's do) and make another
    estimate (linear conflicts, which the parent's lacks) are refused, not believed."""
    shape = Shape.devquiz(3, 3)
    dist, states = sample_states(shape, 0, seed=0)
    parent = Searcher(manhattan_heuristic(shape, use_lc=False))
    parent.recipe = Recipe(shape, use_db=False)  # what the workers open: Manhattan with linear conflicts
    with ProcessPoolExecutor(2, mp_context=mp.get_context("fork")) as pool:
        workers = Workers(2, pool.submit, recipe=True)
        with pytest.raises(WorkersDiffer, match="where the parent searches"):
            parent.solve(Board(shape, states[0]), threads=workers)
        parent.h = manhattan_heuristic(shape)  # the same estimate as theirs: believed
        matched = Searcher(manhattan_heuristic(shape))
        matched.recipe = parent.recipe
        _agree(matched, shape, dist, states, workers)


def test_limits_stop_the_workers(windows, two):
    """A node limit and a deadline end the search as a limit, with a lower bound
    no greater than the length."""
    shape = Shape.devquiz(3, 3)
    dist, states = sample_states(shape, 0, seed=0)
    s = Searcher(manhattan_heuristic(shape))
    board = Board(shape, states[0])
    res = s.solve(board, threads=two, node_limit=300)
    assert res.status == "limit" and res.lower_bound <= dist[states[0]]
    res = s.solve(board, threads=two, time_limit=1e-9)
    assert res.status == "limit" and res.lower_bound <= dist[states[0]]


def test_a_dask_cluster_opens_the_parents_tables(windows, tmp_path):
    """``solve(scheduler=client)``: each worker opens the database folder the parent
    reads (:class:`~solver.search.remote.Recipe`) and the lengths are the BFS ones."""
    distributed = pytest.importorskip("distributed")
    import solver.search.kernel  # noqa: F401 - loaded: no first nodes in plain Python, which answer these boards
    from solver.api import solve

    shape = Shape.korf(3, 3)
    build_pdb(shape, named_partition(shape, "4-4"), tmp_path)
    dist, states = sample_states(shape, 3, seed=5)
    assert heuristic_for(shape, tmp_path).names
    args = dict(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None)
    with distributed.LocalCluster(**args) as cluster, distributed.Client(cluster) as client:
        for cells in states:
            board = Board(shape, cells)
            res = solve(board, db_dir=tmp_path, scheduler=client, fallback=False)
            assert res.optimal and res.length == dist[cells] and check_moves(board, res.moves).ok
    opened = [k for k in remote._searchers if k is not None]  # (the workers are threads of this process)
    assert [k.db_dir for k in opened] == [str(tmp_path.resolve())]


def test_solve_split_on_the_command_line(windows):
    """``solve --split``: the answer and its proof as on threads; with --threads too, a
    usage error."""
    runner = CliRunner()
    res = runner.invoke(main, ["solve", "3,3,867254301", "--no-db", "--split", "--workers", "2", "--json"])
    assert res.exit_code == 0, res.output
    assert '"optimal": true' in res.output and '"length": 31' in res.output
    res = runner.invoke(main, ["solve", "3,3,867254301", "--no-db", "--split", "--threads", "2"])
    assert res.exit_code == 2 and "--split" in res.output


@pytest.mark.slow
def test_a_cluster_of_processes_proves_the_one_process_length(windows, tmp_path, monkeypatch, tune):
    """A LocalCluster of two worker processes, each of which imports the solver, opens the
    database folder and loads the kernel itself: the same lengths, proven, as one process."""
    distributed = pytest.importorskip("distributed")
    from solver.api import solve

    tune(window_max_nodes=50, window_min_nodes=50)  # (each window a round trip through the scheduler)
    shape = Shape.devquiz(3, 3, [0])
    build_pdb(shape, named_partition(shape, "4-3"), tmp_path)
    dist, states = sample_states(shape, 2, seed=11)
    args = dict(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    with distributed.LocalCluster(**args) as cluster, distributed.Client(cluster) as client:
        for cells in states:
            board = Board(shape, cells)
            alone = solve(board, db_dir=tmp_path, threads=1, fallback=False)
            res = solve(board, db_dir=tmp_path, scheduler=client, fallback=False)
            assert res.optimal and res.length == alone.length == dist[cells] and check_moves(board, res.moves).ok
        opened = client.run(lambda: [k.db_dir for k in sys.modules["solver.search.remote"]._searchers if k])
    assert sorted(opened.values()) == [[str(tmp_path.resolve())]] * 2  # every worker searched, on its own tables


def test_a_window_stops_once_its_iteration_has_ended(windows, monkeypatch):
    """A worker looks between slices whether the iteration its window belongs to is still
    under way (the number the parent shares with the processes it forked): once another
    one is, the window stops instead of searching a window nobody waits for."""
    import numpy as np

    from solver.search import kernel as _K

    shape = Shape.devquiz(3, 3)
    dist, states = sample_states(shape, 0, seed=0)
    s = Searcher(manhattan_heuristic(shape))
    board = Board(shape, states[0])
    monkeypatch.setitem(remote._searchers, None, s)
    live = np.array([1], dtype=np.int64)
    monkeypatch.setitem(remote._live, "number", live)
    window = remote.Window("it", None, board.cells, dist[states[0]], 100, True, 1, 2, 200, 0, 10**9, ("number", 1))
    assert remote.search_window(window).status == _K.FOUND  # under way: searched to the goal
    live[0] = 2
    assert remote.search_window(window._replace(iteration="again")).status == remote.STOPPED
