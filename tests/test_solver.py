"""The optimal search (solver/search/): lengths against breadth-first search and published
optima, admissible estimates, limits, goal tables, weighted search, and searches that start
from a known bound or answer (the fallback: tests/test_fallback.py)."""

import itertools
import random
import subprocess
import sys

import pytest

from pdb_builder.board import Board, Shape
from pdb_builder.formats import read_file
from pdb_builder.moves import check_moves
from solver.search.heuristic import manhattan_heuristic
from solver.search.searcher import Searcher

from .conftest import data_file
from .naive import bfs_distances


@pytest.mark.parametrize(
    "shape",
    [
        Shape.devquiz(3, 3),
        Shape.korf(3, 3),
        Shape.devquiz(3, 3, [4]),
        Shape.devquiz(3, 3, [1]),
        Shape.devquiz(4, 3, [5, 6]),
        Shape.devquiz(2, 4),
        Shape.devquiz(3, 3, [3, 5]),
        Shape.korf(4, 2, [3]),
    ],
    ids=lambda s: s.key,
)
def test_optimal_lengths_equal_bfs(shape):
    dist = bfs_distances(shape)
    searcher = Searcher(manhattan_heuristic(shape))
    rng = random.Random(11)
    states = sorted(dist)
    for cells in rng.sample(states, min(60, len(states))):
        board = Board(shape, cells)
        # the heuristic is admissible everywhere, not just on the sampled paths
        assert searcher.initial_h(board) <= dist[cells]
        res = searcher.solve(board)
        assert res.optimal and res.length == dist[cells]
        assert check_moves(board, res.moves).ok


def test_heuristic_admissible_on_every_3x3_state():
    shape = Shape.devquiz(3, 3)
    dist = bfs_distances(shape)
    searcher = Searcher(manhattan_heuristic(shape))
    for cells in random.Random(5).sample(sorted(dist), 3000):
        assert searcher.initial_h(Board(shape, cells)) <= dist[cells]


def test_korf_instances_at_published_lengths():
    bs = read_file(str(data_file("korf100.txt")))
    fast = [r for r in bs.records if r.ident in {"2", "5", "6", "8", "9"}]
    searcher = Searcher(manhattan_heuristic(fast[0].board.shape))
    for rec in fast:
        res = searcher.solve(rec.board)
        assert res.optimal and res.length == rec.expected_length
        assert check_moves(rec.board, res.moves).ok


def test_node_limit_never_claims_optimal():
    bs = read_file(str(data_file("korf100.txt")))
    res = Searcher(manhattan_heuristic(bs.records[0].board.shape)).solve(bs.records[0].board, node_limit=10_000)
    assert res.status == "limit" and not res.optimal and res.moves is None
    assert 41 <= res.lower_bound <= 57


def test_time_limit_stops():
    bs = read_file(str(data_file("korf100.txt")))
    res = Searcher(manhattan_heuristic(bs.records[2].board.shape)).solve(bs.records[2].board, time_limit=0.05)
    assert res.status == "limit" and res.seconds < 5


def test_solver_import_does_not_load_the_build_side():
    build_side = ["pdb_builder.make"]  # the package of bfs, building, lowering, catalogue, verify
    code = (
        "import solver, solver.search.searcher, solver.search.kernel, solver.search.threads, solver.run.batch, "
        "solver.outcome, solver.cli, sys; "
        f"print([m for m in {build_side!r} if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    "shape, depth",
    [(Shape.devquiz(3, 3), 12), (Shape.devquiz(3, 3, [4]), 9), (Shape.korf(4, 2, [5]), 6)],
    ids=lambda x: getattr(x, "key", str(x)),
)
def test_goal_table_settles_nodes_and_keeps_optimality(tmp_path, shape, depth):
    from pdb_builder.make.building import build_goal_table
    from solver.search.tables import heuristic_for

    build_goal_table(shape, depth, tmp_path)
    h = heuristic_for(shape, tmp_path)
    assert h.goal_table is not None and h.goal_table.depth <= depth
    with_table, without = Searcher(h), Searcher(manhattan_heuristic(shape))
    dist = bfs_distances(shape)
    nodes_with = nodes_without = 0
    for cells in random.Random(4).sample(sorted(dist), min(80, len(dist))):
        board = Board(shape, cells)
        a, b = with_table.solve(board), without.solve(board)
        assert a.optimal and a.length == dist[cells] == b.length
        assert check_moves(board, a.moves).ok
        assert any("goal table" in n for n in a.heuristic)
        nodes_with += a.nodes
        nodes_without += b.nodes
    # one board may take more (estimates reorder children), the sample takes fewer
    assert nodes_with < nodes_without


@pytest.mark.parametrize("weight", [150, 300])
def test_weighted_search_is_valid_bounded_and_never_optimal(weight):
    shape = Shape.devquiz(3, 3)
    dist = bfs_distances(shape)
    searcher = Searcher(manhattan_heuristic(shape))
    longer = 0
    for cells in random.Random(9).sample(sorted(dist), 60):
        board = Board(shape, cells)
        res = searcher.solve(board, weight=weight)
        assert res.status == "solved" and not res.optimal and check_moves(board, res.moves).ok
        assert dist[cells] <= res.length <= weight * dist[cells] // 100
        assert res.lower_bound <= dist[cells]
        longer += res.length > dist[cells]
    assert longer  # the weight really changes the search


@pytest.mark.parametrize(
    "shape", [Shape.devquiz(3, 3), Shape.devquiz(3, 3, [4]), Shape.devquiz(4, 3, [5, 6])], ids=lambda s: s.key
)
def test_search_from_an_earlier_bound_to_a_known_answer_keeps_bfs_lengths(shape):
    """``floor`` (a bound an earlier search proved) skips the iterations below it and
    ``ceiling`` (a known answer's length) stops where that answer is proven: against
    exhaustive BFS, every floor up to the distance (either parity) gives the optimal
    length, a known optimal answer is proven as a bound equal to it and never above,
    and a longer known answer still lets the search find the optimal one."""
    dist = bfs_distances(shape)
    searcher = Searcher(manhattan_heuristic(shape))
    far = sorted(c for c, d in dist.items() if d >= 6)
    for cells in random.Random(17).sample(far, 12):
        board, d = Board(shape, cells), dist[cells]
        h0 = searcher.initial_h(board)
        for floor in range(0, d + 1):
            res = searcher.solve(board, floor=floor)
            assert res.optimal and res.length == d and check_moves(board, res.moves).ok
        proof = searcher.solve(board, floor=h0, ceiling=d)
        assert proof.status == "limit" and proof.moves is None and proof.lower_bound == d
        assert searcher.solve(board, floor=d, ceiling=d).nodes == 0  # nothing left to search
        longer = searcher.solve(board, floor=d - 2, ceiling=d + 2)
        assert longer.optimal and longer.length == d
        assert searcher.solve(board, floor=d, weight=150).length >= d  # weighted: no floor, no proof


def test_a_board_with_a_known_answer_searches_for_the_proof_alone(monkeypatch, tune):
    """solve_record with ``known``: a walled board no table serves (Manhattan, then
    its layout's tables in memory) starts at the earlier bound, runs no fallback when
    an answer is known, and the better of the two outcomes is the known answer proven
    by the bound (BFS truth); a known answer longer than optimal is beaten."""
    from pdb_builder.formats import Record
    from solver.api import SolverPool, solve_record
    from solver.outcome import Known, Outcome, better

    tune(layout_after_nodes=30)
    shape = Shape.devquiz(4, 3, [5, 6])
    dist = bfs_distances(shape)
    pool = SolverPool(use_db=False)
    far = sorted(c for c, d in dist.items() if d >= 12)
    for k, cells in enumerate(random.Random(5).sample(far, 8)):
        board, d = Board(shape, cells), dist[cells]
        rec = Record(k, str(board), board)
        earlier = Outcome(k, str(board), "solved", None, length=d, lower_bound=d - 4, h0=0, moves="x")
        out = solve_record(rec, pool, known=Known.of(earlier))
        assert out.status == "limit" and out.fallback is None and out.lower_bound == d
        assert out.floor == (d - 4 if d - 4 > out.h0 else None)  # where it began
        kept = better(earlier, out)
        assert kept.optimal and kept.certificate["how"] == "bound"
        stopped = solve_record(rec, pool, node_limit=5, known=Known(0, d + 10))
        assert stopped.status == "limit" and stopped.fallback is None  # a limit: still no fallback
        found = solve_record(rec, pool, known=Known(d - 2, d + 2))
        assert found.optimal and found.length == d and check_moves(board, found.moves).ok
        assert found.certificate.get("floor") == (d - 2 if d - 2 > found.h0 else None)


def test_a_search_records_what_each_iteration_cost():
    """The iterations a search completed (threshold, nodes, seconds) and the one a limit
    stopped: the thresholds climb from the estimate (or the floor) in steps of two, all
    below the BFS distance, and their nodes add up to the search's; a limit leaves the
    iteration at the lower bound unfinished."""
    shape = Shape.devquiz(3, 3)
    dist = bfs_distances(shape)
    searcher = Searcher(manhattan_heuristic(shape))
    searcher.python_first = False  # every node in the kernel's iterations
    # boards whose estimate is at least two iterations short of the distance
    states = sorted(dist)
    random.Random(23).shuffle(states)
    deep = (c for c in states if dist[c] - searcher.initial_h(Board(shape, c)) >= 4)
    for cells in itertools.islice(deep, 6):
        board, d = Board(shape, cells), dist[cells]
        h0 = searcher.initial_h(board)
        res = searcher.solve(board)
        assert res.length == d and res.unfinished is None
        assert [t for t, _, _ in res.iterations] == list(range(h0, d, 2))
        assert sum(n for _, n, _ in res.iterations) < res.nodes and all(s >= 0 for *_, s in res.iterations)
        before = sum(n for _, n, _ in res.iterations[:-1])  # stopped halfway through the iteration at d - 2
        stopped = searcher.solve(board, node_limit=before + res.iterations[-1][1] // 2)
        t, n, _ = stopped.unfinished
        assert [it[:2] for it in stopped.iterations] == [it[:2] for it in res.iterations[:-1]]
        assert n + before == stopped.nodes and t == stopped.lower_bound == d - 2
        later = searcher.solve(board, floor=d - 2)
        assert [t for t, _, _ in later.iterations] == [d - 2] and later.iterations[0][1] == res.iterations[-1][1]


def test_a_board_searches_again_without_a_failed_table_for_what_its_limit_has_left(monkeypatch):
    """A table that fails its checksums while a board searches: the board searches again
    without it, for what its time limit has left (a quarter of it at least), not for the
    whole limit again; a table that cannot be left out stops the board's batch."""
    import time

    from pdb_builder.errors import DatabaseError
    from pdb_builder.formats import Record
    from solver import api

    board = Board(Shape.devquiz(3, 3), (1, 2, 3, 4, 5, 6, 7, 0, 8))
    limits = []

    def failing_once(rec, pool, time_limit, *args):
        limits.append(time_limit)
        if len(limits) == 1:
            time.sleep(0.3)
            raise DatabaseError("t.h5: table bytes fail their checksums")
        return "searched again"

    class Pool:
        threads = 1
        leave_out = staticmethod(lambda exc: True)

    monkeypatch.setattr(api, "_solve_valid", failing_once)
    assert api.solve_record(Record(1, str(board), board), Pool(), time_limit=1.0) == "searched again"
    assert limits[0] == 1.0 and 0.25 <= limits[1] <= 0.7
    limits.clear()
    assert api.solve_record(Record(1, str(board), board), Pool(), time_limit=0.2) == "searched again"
    assert limits == [0.2, 0.05]  # the limit spent: a quarter of it for an answer
    Pool.leave_out = staticmethod(lambda exc: False)
    limits.clear()
    with pytest.raises(DatabaseError):
        api.solve_record(Record(1, str(board), board), Pool(), time_limit=1.0)
