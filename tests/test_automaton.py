"""Duplicate-path pruning (pdb_builder/automaton.py, solver/search/automaton.py) against independent truth: the
strings it keeps are exactly the first to reach each arrangement, found by enumerating
every string; searches that follow it keep the breadth-first optimal lengths."""

import dataclasses
import itertools
import random

import numpy as np
import pytest

from pdb_builder.board import Board, Shape
from pdb_builder.moves import check_moves
from solver.search import automaton as fsm
from solver.search.heuristic import manhattan_heuristic
from solver.search.searcher import Searcher

from .naive import bfs_distances

DELTA = {"L": (0, -1), "R": (0, 1), "U": (-1, 0), "D": (1, 0)}


def _walk(shape, start, string):
    """The arrangement (every cell its own label) after ``string`` from ``start``, or
    None where a move leaves the board or meets a wall."""
    cells, b = list(range(shape.n)), start
    for m in string:
        r, c = divmod(b, shape.width)
        r, c = r + DELTA[m][0], c + DELTA[m][1]
        if not (0 <= r < shape.height and 0 <= c < shape.width) or r * shape.width + c in shape.walls:
            return None
        nb = r * shape.width + c
        cells[b], cells[nb], b = cells[nb], cells[b], nb
    return tuple(cells)


def _kept(a, start, string):
    state = a.roots[start]
    for m in string:
        state = a.delta[state, "LRUD".index(m)]
        if state < 0:
            return False
    return True


@pytest.mark.parametrize(
    "shape, depth",
    [
        (Shape.korf(3, 3), 6),
        (Shape.devquiz(3, 3, [4]), 3),
        (Shape.devquiz(2, 4), 8),
        (Shape.devquiz(3, 4, [4]), 7),
        (Shape.devquiz(4, 4, [1, 9]), 6),  # cell 5 a cut vertex
        (Shape.korf(4, 4), 6),
    ],
    ids=lambda x: x.key if isinstance(x, Shape) else str(x),
)
def test_the_automaton_keeps_exactly_the_first_string_to_each_arrangement(shape, depth):
    """Every string of at most ``depth`` moves from every free cell, in order of length,
    then of letters (L R U D): the automaton keeps a legal string exactly when no earlier
    one reaches its arrangement, so every string it prunes has a kept equivalent that
    is no longer."""
    a = fsm.build_automaton(shape, depth)
    pruned = 0
    for start in shape.free_cells:
        first = {}
        for length in range(depth + 1):
            for string in map("".join, itertools.product("LRUD", repeat=length)):
                arr = _walk(shape, start, string)
                if arr is None:
                    continue
                canonical = arr not in first
                first.setdefault(arr, string)
                assert _kept(a, start, string) == canonical, (shape.key, start, string, first[arr])
                pruned += not canonical
    assert pruned and a.forbidden and a.depth == depth


def _states(shape, k, seed):
    dist = bfs_distances(shape)
    far = sorted(dist, key=lambda c: (-dist[c], c))[:3]
    return dist, far + random.Random(seed).sample(sorted(dist), k)


@pytest.mark.parametrize(
    "shape",
    [
        Shape.devquiz(3, 3),
        Shape.korf(3, 3, [2]),
        Shape.devquiz(3, 4, [1, 6]),
        Shape.korf(4, 4, [3, 7, 8, 11, 12, 13, 15]),
    ],
    ids=lambda s: s.key,
)
def test_pruned_searches_keep_optimal_lengths_with_fewer_nodes(shape):
    """Lengths against a breadth-first search, with the undo-only automaton and deeper
    ones; the deeper generate no more nodes in all (they generate a subset of each
    iteration's nodes; only the order the goal is met in may differ)."""
    dist, states = _states(shape, 30, seed=3)
    nodes = {}
    for depth in (2, 6, 10, fsm.MAX_PRUNE_DEPTH):
        s = Searcher(manhattan_heuristic(shape), prune=depth)
        nodes[depth] = 0
        for cells in states:
            board = Board(shape, cells)
            res = s.solve(board)
            assert res.optimal and res.length == dist[cells], (str(board), depth, res.length, dist[cells])
            assert check_moves(board, res.moves).ok
            nodes[depth] += res.nodes
    assert nodes[fsm.MAX_PRUNE_DEPTH] <= nodes[10] <= nodes[6] <= nodes[2], nodes
    assert nodes[10] < nodes[2], nodes


def test_a_searcher_builds_a_deeper_automaton_once_its_searches_pay_for_it():
    shape = Shape.devquiz(3, 3)
    undo = fsm.undo_only(shape)
    assert undo.depth == 2 and fsm.deeper(shape, undo, 1_000) is None  # a quick search never waits for one
    first = fsm.deeper(shape, undo, 10**7)
    assert first.depth == fsm.FIRST_DEEPER
    assert fsm.deeper(shape, first, 1_000) is None
    assert fsm.deeper(shape, first, 10**9).depth == fsm.FIRST_DEEPER + fsm.DEPTH_STEP
    assert fsm.deeper(shape, first, 10**9, left=1e-6) is None  # never a build a time limit has no room for
    top = fsm.automaton_for(shape, fsm.MAX_PRUNE_DEPTH)
    assert fsm.deeper(shape, top, 10**12) is None  # no deeper than the most
    big = dataclasses.replace(first, depth=8, delta=np.zeros((int(fsm.MAX_STATES / fsm.STEP_GROWTH) + 1, 4), np.int32))
    assert fsm.deeper(shape, big, 10**15) is None  # one whose next would pass the memory bound: kept
    s = Searcher(manhattan_heuristic(shape))
    assert s.automaton.depth == 2
    s.searched = 10**12  # as if it had searched for long: its next iteration gets a deeper one, kept
    dist = bfs_distances(shape)
    board = Board(shape, max(dist, key=dist.get))  # a farthest board: several iterations
    res = s.solve(board)
    assert res.optimal and s.automaton.depth > 2
    fixed = Searcher(manhattan_heuristic(shape), prune=4)
    fixed.searched = 10**12
    assert fixed.solve(board).length == res.length and fixed.automaton.depth == 4


@pytest.mark.parametrize(
    "shape, depth",
    [(Shape.korf(3, 3, [4]), 10), (Shape.devquiz(3, 4, [5]), 2), (Shape.korf(3, 3), 2)],
    ids=lambda x: x.key if isinstance(x, Shape) else str(x),
)
def test_undos_alone_are_pruned_by_depth_2_and_round_a_ring(shape, depth):
    """Every string of up to ten moves: the depth-2 automaton (made directly, not learnt)
    keeps exactly those without an undo; round a ring of eight cells every string is its
    own arrangement (a lap turns the tiles round), so even depth 10 keeps them all."""
    a = fsm.build_automaton(shape, depth)
    undo = {"LR", "RL", "UD", "DU"}
    strings = [(c, "") for c in shape.free_cells]
    for _ in range(10):
        longer = [(c, s + m) for c, s in strings for m in "LRUD" if _walk(shape, c, s + m) is not None]
        for c, s in longer:
            assert _kept(a, c, s) == (s[-2:] not in undo), (c, s)
        strings = [(c, s) for c, s in longer if s[-2:] not in undo]
    if shape.walls == {4}:
        assert len(strings) == 2 * len(shape.free_cells)  # round one way or the other


@pytest.mark.parametrize(
    "shape, depth",
    [(Shape.korf(3, 3), 8), (Shape.devquiz(3, 4, [4]), 7), (Shape.devquiz(4, 4, [1, 9]), 6), (Shape.korf(4, 4), 8)],
    ids=lambda x: x.key if isinstance(x, Shape) else str(x),
)
def test_the_shipped_check_passes_a_learnt_automaton_and_names_a_damaged_one(shape, depth):
    """``check_automaton`` (what ``verify --automaton`` runs) passes the automata that
    the walk above finds right, counts as pruned what they forbid, and names the cell and
    string of an automaton damaged either way: a first string pruned, a duplicate kept."""
    from pdb_builder.automaton import check_automaton

    a = fsm.build_automaton(shape, depth)
    r = check_automaton(shape, a)
    assert r.fault is None and r.pruned == a.forbidden and r.kept + r.pruned == r.strings
    start = shape.free_cells[0]
    legal = [m for m, letter in enumerate("LRUD") if _walk(shape, start, letter) is not None]
    lost = dataclasses.replace(a, delta=a.delta.copy())
    lost.delta[a.roots[start], legal[0]] = fsm.PRUNED  # a one-move string, the first to its arrangement
    r = check_automaton(shape, lost)
    assert r.fault is not None and f"from cell {start}" in r.fault and "prunes the first string" in r.fault
    after = a.delta[a.roots[start], legal[0]]
    back = legal[0] ^ 1  # the undo (L R and U D undo each other)
    dup = dataclasses.replace(a, delta=a.delta.copy())
    dup.delta[after, back] = a.roots[start]
    r = check_automaton(shape, dup)
    letter = "LRUD"
    assert r.fault is not None and r.fault.endswith(letter[legal[0]] + letter[back]) and "keeps" in r.fault


def test_verify_and_inspect_show_and_check_a_shapes_automata(tmp_path):
    """``verify --automaton`` checks every shape a target names (exit 0), ``inspect
    --automaton`` lists its automata by depth with the forbidden strings the check
    counts; a bad target or a check too large for the depth is a one-line error, exit 2."""
    import json

    from click.testing import CliRunner

    from solver.cli import main

    r = CliRunner().invoke(main, ["verify", "--automaton", "3,3,1=3456780", "--depth", "6"])
    assert r.exit_code == 0 and r.output.startswith("ok: automaton of 3x3-devquiz-w2, depth 6:"), r.output
    r = CliRunner().invoke(main, ["inspect", "--automaton", "4x4", "--depth", "8", "--json"])
    rows = [json.loads(line) for line in r.output.splitlines()]
    assert r.exit_code == 0 and [x["depth"] for x in rows] == [2, 4, 6, 8], r.output
    assert rows[-1]["forbidden strings"] == fsm.build_automaton(Shape.korf(4, 4), 8).forbidden
    for args in (["verify", "--automaton", "9x"], ["verify", "--automaton", "6x6", "--depth", "16"]):
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, r.output
