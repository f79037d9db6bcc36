"""A*+IDA* (solver.search.frontier): IDA* from the open nodes of a bounded A* part finds
the optimal length on small boards with and without walls, on one thread and on two, at
every frontier size (one node: the root alone; sizes whose next bound fills the buffer
mid-level) and automaton depth, against an independent BFS; its limits, floor and ceiling
hold as IDA*'s do; and an automaton deepened after the frontier was built keeps the proof."""

import pytest

from pdb_builder.board import Board, Shape
from pdb_builder.moves import check_moves
from solver.search.automaton import automaton_for
from solver.search.frontier import FrontierRun, build_frontier
from solver.search.searcher import MAX_DEPTH, Searcher
from solver.search.tables import heuristic_for
from solver.search.threads import IterationSpec, Threads

from .conftest import walk_cells
from .naive import distance

SHAPES = [
    Shape.devquiz(3, 3),
    Shape.devquiz(4, 3, [5]),
    Shape.devquiz(4, 4, [5, 6]),
    Shape.devquiz(2, 4),
    Shape.devquiz(4, 4, [1, 9]),  # cell 5 a cut vertex
]


def _searcher(shape, tmp_path, depth, size):
    s = Searcher(heuristic_for(shape, tmp_path), prune=depth, frontier=size)
    s.python_first = False  # every board through the kernel
    return s


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.key)
@pytest.mark.parametrize("depth", [2, 8, 12])
def test_a_star_above_ida_finds_the_optimal_length(shape, depth, tmp_path):
    s = _searcher(shape, tmp_path, depth, 0)
    filled = 0
    for seed in range(4):
        board = Board(shape, tuple(walk_cells(shape, 300, seed)))
        optimal = distance(shape, board.cells)
        for size in (1, 8, 60, 400):
            fr = build_frontier(s, board, size, MAX_DEPTH)
            assert len(fr) <= size
            filled += fr.nodes > sum(n for _, n, _ in fr.done)  # a bound tried past the last that fit
            for threads in (1, 2):
                r = s.solve(board, threads=threads, frontier=size)
                assert r.optimal and check_moves(board, r.moves).ok, (seed, size, threads)
                assert len(r.moves) == optimal, (seed, size, threads)
    assert filled  # some frontier's next bound filled its buffer, or outgrew the size, mid-level


def test_a_star_above_ida_finds_the_optimal_length_on_3x4(tmp_path):
    """The wall-free 3x4 (239 million arrangements: its truth by bidirectional BFS), on one
    thread, two threads and two worker processes."""
    from solver.search.processes import Workers

    shape = Shape.devquiz(3, 4)
    s = _searcher(shape, tmp_path, 12, 0)
    with Workers.local(2) as workers:
        for seed in range(2):
            board = Board(shape, tuple(walk_cells(shape, 300, seed)))
            optimal = distance(shape, board.cells)
            for size in (8, 400, 5000):
                for threads in (1, 2, workers):
                    r = s.solve(board, threads=threads, frontier=size)
                    assert r.optimal and check_moves(board, r.moves).ok and len(r.moves) == optimal, (seed, size)


def test_a_star_above_ida_with_a_goal_table_on_two_threads(tmp_path):
    """Pattern tables and a goal table (whose scratch key each thread writes), two threads:
    the BFS lengths."""
    from pdb_builder.make.building import build_goal_table, build_pdb
    from pdb_builder.patterns import named_partition

    shape = Shape.devquiz(3, 3)
    build_pdb(shape, named_partition(shape, "4-4"), tmp_path)
    build_goal_table(shape, 6, tmp_path)
    s = _searcher(shape, tmp_path, 12, 0)
    assert s.h.goal_table is not None
    for seed in range(4):
        board = Board(shape, tuple(walk_cells(shape, 300, seed)))
        for size in (1, 8, 60):
            r = s.solve(board, threads=2, frontier=size)
            assert r.optimal and check_moves(board, r.moves).ok and len(r.moves) == distance(shape, board.cells)


def test_the_root_alone_is_ida_star(tmp_path):
    shape = Shape.devquiz(3, 3)
    s = _searcher(shape, tmp_path, 12, 0)
    board = Board(shape, tuple(walk_cells(shape, 300, 1)))
    fr = build_frontier(s, board, 1, MAX_DEPTH)
    assert fr.bound is None and len(fr) == 1 and fr.plen[0] == 0
    plain = s.solve(board)
    one = s.solve(board, frontier=1)
    assert one.moves and len(one.moves) == plain.length == distance(shape, board.cells)


@pytest.mark.parametrize("shape", SHAPES[:3] + [Shape.korf(4, 4)], ids=lambda s: s.key)
def test_a_deeper_automaton_after_the_frontier_keeps_the_proof(shape, tmp_path):
    """The frontier's paths were kept under the undo-only automaton; the IDA* part walks them
    under depth 12 (as a search that deepens its automaton between iterations does), which
    prunes some of them partway down."""
    s = _searcher(shape, tmp_path, 2, 0)
    for seed in range(4) if shape.n < 16 else range(2):
        s.automaton = automaton_for(shape, 2)
        board = Board(shape, tuple(walk_cells(shape, 300 if shape.n < 16 else 40, seed)))
        optimal = distance(shape, board.cells)
        run = FrontierRun(s, board, 40 if shape.n < 16 else 3000, MAX_DEPTH, None, None, None)
        s.automaton = deeper = automaton_for(shape, 12)
        thresh = run.start(0)
        while True:
            spec = IterationSpec(thresh, 100, True, None, None, 0, (None, 0), MAX_DEPTH, deeper)
            end = Threads(1).iteration(s, board, spec, run)
            if end.status == "found":
                break
            assert end.status == "done" and thresh < optimal
            thresh = end.next_threshold
        assert check_moves(board, end.moves).ok and len(end.moves) == optimal == thresh


def test_limits_floor_and_ceiling_hold_as_for_ida_star(tmp_path):
    shape = Shape.devquiz(4, 4, [5, 6])
    s = _searcher(shape, tmp_path, 12, 50)
    board = Board(shape, tuple(walk_cells(shape, 400, 3)))
    optimal = distance(shape, board.cells)
    full = s.solve(board)
    assert full.length == optimal and full.nodes > 40
    for limit in (5, 40, full.nodes // 2):
        for threads in (1, 2):
            r = s.solve(board, node_limit=limit, threads=threads)
            assert r.status == "limit" and r.moves is None
            assert r.nodes <= limit + 4 * threads  # a node's children are generated together
            assert r.lower_bound <= optimal
    floor = s.solve(board, floor=optimal)
    assert floor.length == optimal and floor.nodes <= full.nodes
    capped = s.solve(board, ceiling=optimal)
    assert capped.status == "limit" and capped.lower_bound == optimal


@pytest.mark.parametrize("shape", [SHAPES[0], SHAPES[2]], ids=lambda s: s.key)
def test_a_star_above_ida_on_worker_processes_finds_the_optimal_length(shape, tmp_path):
    from solver.search.processes import Workers

    s = _searcher(shape, tmp_path, 12, 30)
    with Workers.local(2) as workers:
        for seed in range(3):
            board = Board(shape, tuple(walk_cells(shape, 300, seed)))
            r = s.solve(board, threads=workers)
            assert r.optimal and check_moves(board, r.moves).ok
            assert len(r.moves) == distance(shape, board.cells)
        assert workers.log  # the frontier's nodes went out in windows


def test_a_star_above_ida_on_a_dask_cluster_builds_the_frontier_on_each_worker():
    """``solve(scheduler=client, frontier=N)``: each worker builds the same frontier (checked
    against the parent's) and searches its windows; the lengths are the BFS ones."""
    distributed = pytest.importorskip("distributed")
    import solver.search.remote as remote
    from solver.api import solve

    shape = Shape.devquiz(3, 3)
    remote._frontiers.clear()
    args = dict(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None)
    with distributed.LocalCluster(**args) as cluster, distributed.Client(cluster) as client:
        for cells in ((8, 6, 7, 2, 5, 4, 3, 0, 1), walk_cells(shape, 300, 4)):
            board = Board(shape, tuple(cells))
            res = solve(board, use_db=False, scheduler=client, fallback=False, frontier=20)
            assert res.optimal and res.length == distance(shape, board.cells) and check_moves(board, res.moves).ok
    assert remote._frontiers  # (the workers are threads of this process)


def test_a_long_search_of_a_wall_free_5x5_goes_on_by_a_star_above_ida(tmp_path, monkeypatch, tune):
    """The default policy: past an iteration of FRONTIER_AFTER nodes, the rest of a wall-free
    5x5's search is A*+IDA* (the length the BFS's, the iterations IDA*'s and then the IDA*
    part's); a walled 5x5, or ``frontier=0``, stays IDA* alone."""

    tune(frontier_after=5, frontier_nodes=200)
    for shape, switches in ((Shape.korf(5, 5), True), (Shape.korf(5, 5, [12]), False)):
        s = _searcher(shape, tmp_path, 12, None)
        went_on = 0
        for seed in range(3):
            board = Board(shape, tuple(walk_cells(shape, 46, seed)))
            optimal = distance(shape, board.cells)
            r = s.solve(board)
            assert r.optimal and check_moves(board, r.moves).ok and len(r.moves) == optimal, (shape.key, seed)
            assert (r.frontier is not None) == (switches and any(n >= 5 for _, n, _ in r.iterations)), seed
            thresholds = [t for t, _, _ in r.iterations]
            assert thresholds == sorted(set(thresholds)) and thresholds[-1] < optimal
            went_on += r.frontier is not None
        assert went_on == (3 if switches else 0)
        assert s.solve(board, frontier=0).frontier is None
