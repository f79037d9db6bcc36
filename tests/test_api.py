"""The library API: the same answers as the CLI, held against BFS."""

import json

import pytest
from click.testing import CliRunner

from pdb_builder import build, check, inspect
from pdb_builder.board import Shape
from pdb_builder.errors import BoardError, OptionsError
from solver import Result, solve
from solver.cli import main

from .naive import bfs_distances
from .test_inspect import walk


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    folder = tmp_path_factory.mktemp("api-db")
    paths = build("3x3", goal="devquiz", db_dir=folder, partition="4-4")
    assert [p.name for p in paths] == ["3x3-devquiz.pdb.4-4.h5"] and paths[0].exists()
    assert build("3x3", goal="devquiz", db_dir=folder, partition="4-4") == paths  # kept, not rebuilt
    return folder


def test_solve_is_optimal_and_matches_the_cli(db):
    for shape in (Shape.devquiz(3, 3), Shape.devquiz(3, 3, [4])):
        dist = bfs_distances(shape)
        for seed in range(3):
            board = walk(shape, seed=seed)
            r = solve(board, db_dir=db)
            assert isinstance(r, Result) and r.status == "solved" and r.optimal
            assert r.length == len(r.moves) == dist[tuple(_cells(board))]
            assert check(board, r.moves).reaches_goal and r.certificate["length"] == r.length
            cli = json.loads(CliRunner().invoke(main, ["solve", "--json", "--db-dir", str(db), board]).stdout)
            assert {k: cli[k] for k in ("status", "length", "optimal", "tables")} == {
                "status": r.status,
                "length": r.length,
                "optimal": r.optimal,
                "tables": r.tables,
            }


def _cells(text):
    from pdb_builder.formats import parse_board_text

    return parse_board_text(text)[1].cells


def test_solve_decides_solvability_first_and_rejects_bad_boards(db):
    r = solve("3,3,213456780", db_dir=db)
    assert r.status == "unsolvable" and r.moves is None and r.exit_code == 3
    with pytest.raises(BoardError):
        solve("3,3,12345678", db_dir=db)
    for bad in (dict(time_limit=0), dict(time_limit=-1), dict(node_limit=0), dict(threads=0), dict(goal="foo")):
        with pytest.raises(OptionsError):
            solve("3,3,123456708", db_dir=db, **bad)


def test_check_and_inspect_return_data(db):
    c = check("3,3,123456708", "RL")
    assert c.solvable and c.reaches_goal is False
    c = check("3,3,123456708", "D")
    assert c.reaches_goal is False and c.move_index == 0 and "leave the board" in c.move_error
    assert not check("3,3,213456780").solvable
    rows = inspect(db)
    assert [(r.shape, r.kind, r.name) for r in rows] == [("3x3-devquiz", "pdb", "4-4")]


def test_threads_are_per_call_not_kept_in_the_shared_pool():
    """Calls share one pool of tables per folder; a call's ``threads`` is its own."""
    from solver import api

    board = "14 13 15 7 11 12 9 5 6 0 2 1 4 8 10 3"  # Korf #1, optimal 57
    two = solve(board, use_db=False, threads=2, node_limit=10**9)
    pool = api._POOLS[(None, False)]
    assert pool.threads == 1
    one = solve(board, use_db=False, threads=1, node_limit=10**9)
    assert two.optimal and one.optimal and two.length == one.length == 57


def test_a_calls_search_settings_reach_its_search_and_no_other():
    """``frontier`` goes with its call to its search, never onto the pool the calls
    share: the A* part's search, read back from its node count, is the one each call
    asked for, before and after calls with other settings, and from two threads at once."""
    from concurrent.futures import ThreadPoolExecutor

    from solver import api

    board = "3,3,867254301"  # 31 moves
    alone = solve(board, use_db=False, frontier=0, threads=1).nodes
    part = solve(board, use_db=False, frontier=30, threads=1).nodes
    assert part != alone  # the A* part changes the count
    assert solve(board, use_db=False, frontier=0, threads=1).nodes == alone
    with ThreadPoolExecutor(2) as ex:
        got = list(ex.map(lambda f: solve(board, use_db=False, frontier=f, threads=1).nodes, [0, 30] * 4))
    assert got == [alone, part] * 4
    assert api._POOLS[(None, False)].frontier is None  # one pool for both settings, its own default untouched
