"""Walled boards solved on wall-free tables with their two-bit copies (what
``build --wall-free`` makes by default), lengths held against breadth-first search
(tests/naive.py), never against the kernel under test."""

import random

import pytest

from pdb_builder.board import Board, Shape
from pdb_builder.make.building import build_pdb
from pdb_builder.moves import check_moves
from pdb_builder.patterns import named_partition
from solver.search.searcher import Searcher
from solver.search.tables import heuristic_for

from .naive import bfs_distances, distance, layouts


@pytest.fixture(scope="module")
def wall_free(tmp_path_factory):
    folder = tmp_path_factory.mktemp("wall-free")
    for shape, name in ((Shape.devquiz(3, 3), "4-4"), (Shape.devquiz(2, 4), "4-3"), (Shape.devquiz(3, 4), "6-5")):
        build_pdb(shape, named_partition(shape, name), folder)  # two-bit copies: the default
    return folder


def _searcher(shape, folder):
    h = heuristic_for(shape, folder)
    s = Searcher(h)
    assert h.lookups and all(n.startswith("wall-free") or "wall-free" in n for n in h.names), h.names
    assert any(p is not None for p in s.packed)  # the search reads the two-bit copies
    if shape.width == shape.height:  # every layout, symmetric or not, also read through the reflection
        assert any(n.endswith("reflected") for n in h.names), h.names
    return s


def _check(searcher, shape, cells, exact):
    res = searcher.solve(Board(shape, cells))
    assert res.optimal and res.length == exact, (str(Board(shape, cells)), res.length, exact)
    assert check_moves(Board(shape, cells), res.moves).ok


@pytest.mark.parametrize("width,height", [(3, 3), (2, 4)])
def test_every_walled_layout_matches_bfs(wall_free, width, height):
    rng = random.Random(width * 10 + height)
    count = 0
    for shape in layouts(width, height, min_walls=1):
        if len(shape.free_cells) < 3:
            continue
        dist = bfs_distances(shape)
        searcher = _searcher(shape, wall_free)
        far = max(dist.values())
        picks = [c for c, d in dist.items() if d == far][:3] + rng.sample(sorted(dist), min(12, len(dist)))
        for cells in picks:
            _check(searcher, shape, cells, dist[cells])
        count += 1
    assert count > 20  # the layouts really were enumerated


def test_sampled_walled_3x4_boards_match_bfs(wall_free):
    rng = random.Random(34)
    shapes = [s for s in layouts(3, 4, min_walls=1, max_walls=2)]
    for shape in rng.sample(shapes, 16):
        searcher = _searcher(shape, wall_free)
        for _ in range(3):
            cells, b = list(shape.goal), shape.goal_blank
            for _ in range(400):  # a random walk of the blank: a board far from the goal
                d = rng.choice(shape.neighbours[b])
                cells[b], cells[d], b = cells[d], 0, d
            cells = tuple(cells)
            _check(searcher, shape, cells, distance(shape, cells))
