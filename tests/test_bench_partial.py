"""The partial tables and instance sizes of scripts/bench_partial_tables.py, against a
brute-force breadth-first search over a pattern's placements (the blank ignored)."""

from collections import deque

import pytest

from pdb_builder.board import Board, Shape
from pdb_builder.entries import rank_py

from .conftest import script_module, walk_cells

SHAPES = [
    (Shape.devquiz(3, 3), (1, 2, 3)),
    (Shape.devquiz(4, 3, [5, 6]), (1, 2, 3, 4)),
    (Shape.devquiz(5, 3, [2, 7]), (1, 4, 6, 9)),
    (Shape.devquiz(4, 4, [5, 10]), (1, 2, 3, 4)),
]


def _distances(shape, tiles, source):
    """Each placement's moves from ``source`` (a tuple of cells, one a tile): a tile
    moves onto a neighbouring free cell no other tile of the pattern holds."""
    dist, todo = {source: 0}, deque([source])
    while todo:
        p = todo.popleft()
        for j, c in enumerate(p):
            for d in shape.neighbours[c]:
                if d not in p:
                    q = p[:j] + (d,) + p[j + 1 :]
                    if q not in dist:
                        dist[q] = dist[p] + 1
                        todo.append(q)
    return dist


@pytest.mark.parametrize("shape,tiles", SHAPES)
@pytest.mark.parametrize("entries", [10**6, 40])
def test_a_partial_table_is_the_distance_up_to_its_radius_and_radius_plus_one_past_it(shape, tiles, entries):
    bench = script_module("bench_partial_tables")
    board = Board(shape, tuple(walk_cells(shape, 30, 1)))
    table, stats = bench.partial_table(shape, tiles, board, entries)
    dist = _distances(shape, tiles, tuple(shape.home[t] for t in tiles))
    radius = len(stats.layers) - 1
    assert sum(stats.layers) <= entries
    assert (radius == max(dist.values())) == (entries > len(dist))  # the whole space where it fits
    compact = {c: j for j, c in enumerate(shape.free_cells)}
    for p, d in dist.items():
        assert table[rank_py([compact[c] for c in p], len(shape.free_cells))] == min(d, radius + 1)


@pytest.mark.parametrize("shape,tiles", SHAPES)
def test_the_value_at_the_board_and_the_instance_search_count_what_the_bfs_does(shape, tiles):
    bench = script_module("bench_partial_tables")
    board = Board(shape, tuple(walk_cells(shape, 30, 2)))
    where = {t: c for c, t in enumerate(board.cells) if t > 0}
    start = tuple(where[t] for t in tiles)
    to_goal = _distances(shape, tiles, tuple(shape.home[t] for t in tiles))
    from_start = _distances(shape, tiles, start)
    away = [shape.cell_distances(shape.home[t]) for t in tiles]
    home = {p: sum(a[c] for a, c in zip(away, p)) for p in to_goal}  # the tiles' distances home
    pat = bench.Pattern(shape, tiles, board)
    free = shape.free_cells
    assert pat.value_at_board(10**6) == to_goal[start]
    for slack in (0, 2, 6):
        bound = to_goal[start] + slack
        keys, _, layers, fitted = pat.search(pat.start, 10**6, bound=bound)
        met = {tuple(free[int(x) // pat.n**j % pat.n] for j in range(pat.k)) for x in keys if x >= 0}
        # exactly the placements the tiles' distances home allow, among them every one on a
        # path of at most bound moves
        on_paths = {p for p in to_goal if from_start[p] + to_goal[p] <= bound}
        allowed = {p for p in to_goal if from_start[p] + home[p] <= bound}
        assert fitted and met == allowed and on_paths <= met and sum(layers) == len(met)
