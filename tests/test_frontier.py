"""The frontier prototype (scripts/bench_frontier.py): IDA* from the open nodes of a
breadth-first A* part, carrying the pruning automaton's state of each stored path, finds
the optimal length on small boards with and without walls, at every frontier size and
automaton depth, against an independent bidirectional BFS; and so with the automaton
started afresh at each open node."""

import pytest

from pdb_builder.board import Board, Shape
from pdb_builder.moves import check_moves
from solver.search.searcher import Searcher
from solver.search.tables import heuristic_for

from .conftest import script_module, walk_cells
from .naive import distance

SHAPES = [Shape.devquiz(3, 3), Shape.devquiz(4, 3, [5]), Shape.devquiz(4, 4, [5, 6]), Shape.devquiz(2, 4)]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.key)
@pytest.mark.parametrize("depth", [2, 8, 12])
def test_a_frontier_above_ida_finds_the_optimal_length(shape, depth, tmp_path):
    bench = script_module("bench_frontier")
    searcher = Searcher(heuristic_for(shape, tmp_path), prune=depth)
    for seed in range(6):
        board = Board(shape, tuple(walk_cells(shape, 300, seed)))
        optimal = distance(shape, board.cells)
        for size in (1, 8, 60, 400):
            for order in bench.ORDERS:
                for fresh in (False, True):
                    moves, _, _ = bench.hybrid(searcher, board, size, order, fresh=fresh)
                    assert check_moves(board, moves).ok and len(moves) == optimal, (seed, size, order, fresh)
