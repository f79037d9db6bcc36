"""Dual lookups (solver.search.heuristic.dual_arrays): the dual estimate never overestimates
any state of small shapes, with and without walls, plain and zero-aware, and searches that
read it prove breadth-first search's lengths (tests/naive.py), on one thread and two."""

import random

import numpy as np
import pytest

from pdb_builder.board import Board, Shape
from pdb_builder.make.building import build_pdb
from pdb_builder.moves import check_moves
from pdb_builder.patterns import parse_partition
from solver.search.estimate import dual_estimate
from solver.search.searcher import Searcher
from solver.search.tables import heuristic_for

from .naive import bfs_distances

CASES = [  # shape, partition, zero-aware, whether the dual is ever the larger
    (Shape.korf(3, 3), "1,2,3,4/5,6,7,8", False, True),
    (Shape.korf(3, 3), "1,2,3/4,5,6,7,8", True, True),  # the first pattern's homes cut the blank's home off
    (Shape.devquiz(3, 3, [0]), "2,3,4,5/6,7,8", True, True),
    # cut vertices, and the second pattern's homes cut the blank's home off: its dual is read
    # whole only with the blank at home, and never beats the regular estimate
    (Shape.devquiz(4, 3, [5, 6]), "1,2,3,4,5/8,9,10,11", False, False),
]


@pytest.fixture(
    scope="module", params=range(len(CASES)), ids=[f"{s.key}-{p}-{'zero' if z else 'plain'}" for s, p, z, _ in CASES]
)
def case(request, tmp_path_factory):
    shape, text, zero, raises = CASES[request.param]
    folder = tmp_path_factory.mktemp("dual")
    build_pdb(shape, parse_partition(text, shape), folder, zero_aware=zero)
    return shape, folder, bfs_distances(shape), raises


def test_the_dual_estimate_never_overestimates_any_state(case):
    shape, folder, dist, raises = case
    s = Searcher(heuristic_for(shape, folder), dual=True)
    assert s.dual[0] >= 1  # the board's own tables, read directly: read on the dual too
    tables = s.kernel_tables()
    md, lk_cellmap, lk_w, zero = tables[2], tables[10], tables[11], tables[18]
    raised = 0
    for cells, d in dist.items():
        arr = np.array(cells, dtype=np.int64)
        h = dual_estimate(arr, cells.index(0), md, lk_cellmap, lk_w, zero, s.dual, s.ngroups)
        assert h <= d, (cells, h, d)
        raised += h > s.initial_h(Board(shape, cells))
    assert (raised > 0) == raises  # it is read, and at times it is the larger


@pytest.mark.parametrize("threads", [1, 2])
def test_searches_reading_the_dual_prove_the_bfs_lengths(case, threads):
    shape, folder, dist, _ = case
    s = Searcher(heuristic_for(shape, folder), dual=True)
    plain = Searcher(heuristic_for(shape, folder))
    rng = random.Random(len(dist) + threads)
    far = max(dist.values())
    picks = [c for c, d in dist.items() if d == far][:3] + rng.sample(sorted(dist), min(25, len(dist)))
    nodes = [0, 0]
    for cells in picks:
        board = Board(shape, cells)
        res = s.solve(board, threads=threads)
        assert res.optimal and res.length == dist[cells], (str(board), res.length, dist[cells])
        assert check_moves(board, res.moves).ok
        nodes[0] += res.nodes
        nodes[1] += plain.solve(board, threads=threads).nodes
    assert nodes[0] <= nodes[1]  # it only ever raises an estimate
