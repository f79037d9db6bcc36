"""One board searched by several threads (solver.search.threads): node and time limits,
errors, stops and kills, the arrays each thread writes, and the CLI's ``--threads``.
The ``split`` fixture (tests/conftest.py) makes every iteration past a few dozen nodes
go parallel."""

import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from click.testing import CliRunner

import solver.search.kernel as kernel
import solver.search.threads as parallel
from pdb_builder.board import Board, Shape
from pdb_builder.errors import DatabaseError
from pdb_builder.formats import read_board_arg
from pdb_builder.make.building import build_goal_table, build_pdb
from pdb_builder.patterns import named_partition
from solver.cli import main
from solver.search.heuristic import manhattan_heuristic
from solver.search.searcher import Searcher
from solver.search.tables import heuristic_for

from .conftest import THREADS, Restless, sample_states


@pytest.mark.slow
@pytest.mark.parametrize("threads", (2, 4, "restless"))
def test_node_and_time_limits_stop_every_thread(monkeypatch, threads, tune):
    """Also with nodes shared (4 threads: walks to a shared node count against the limit),
    and with threads that come and go."""
    tune(slice_nodes=20_000, par_slice=5_000, share_after=5_000)
    board = read_board_arg("6,5,9304781Q2==5=S=INLPKGMC6ERHJ=O").records[0].board  # beyond Manhattan distance
    s = Searcher(manhattan_heuristic(board.shape))
    h0 = s.initial_h(board)

    def share():
        return Restless(seed=3) if threads == "restless" else threads

    res = s.solve(board, node_limit=400_000, threads=share())
    assert res.status == "limit" and res.moves is None and not res.optimal and res.lower_bound >= h0
    assert 300_000 <= res.nodes <= 400_000 + 4 * 4  # each slice's budget reserved; a node's children over it
    t0 = time.perf_counter()
    res = s.solve(board, time_limit=0.5, threads=share())
    assert res.status == "limit" and time.perf_counter() - t0 < 5


def test_a_node_limit_holds_when_threads_walk_again_to_shared_nodes(monkeypatch, tune):
    """A thread that walks again from the root to a shared node makes its walk above
    the split depth so far, counted once until then, its own: that jump is looked at
    against the limit before the walk starts, not found after the slices reserved the
    rest.  Sixteen threads on limits up to two million nodes walk again many times (before
    the jump was looked at, about one search in five overran, by up to 800 nodes)."""
    tune(slice_nodes=20_000, par_slice=5_000, share_after=5_000)
    board = read_board_arg("6,5,9304781Q2==5=S=INLPKGMC6ERHJ=O").records[0].board
    s = Searcher(manhattan_heuristic(board.shape))
    over = []
    for limit in range(200_000, 2_000_000, 45_000):
        res = s.solve(board, node_limit=limit, threads=16)
        assert res.status == "limit"
        if res.nodes > limit + 4 * 16:  # (a node's children over it, on each thread)
            over.append((limit, res.nodes - limit))
    assert not over


@pytest.mark.slow
def test_a_time_limit_is_looked_at_between_windows(monkeypatch, tune):
    """Windows of one node end every kernel call before its slice does: the threads
    still look at the clock after each, and start no search past the deadline."""
    tune(window_nodes=1)
    board = read_board_arg("6,5,9304781Q2==5=S=INLPKGMC6ERHJ=O").records[0].board
    s = Searcher(manhattan_heuristic(board.shape))
    s.solve(board, node_limit=1000, threads=2)  # the kernel loaded
    search, starts = kernel.search_slice, []

    def timed(*args):
        starts.append(time.perf_counter())
        return search(*args)

    monkeypatch.setattr(kernel, "search_slice", timed)
    t0 = time.perf_counter()
    res = s.solve(board, time_limit=0.5, threads=2)
    assert res.status == "limit"
    # (a search started before the deadline may end after; a second's slack holds on a busy machine)
    assert max(starts) < t0 + 0.5 + 1.0, max(starts) - t0


def test_an_error_in_a_thread_reaches_the_caller(split, monkeypatch):
    shape = Shape.devquiz(3, 3)
    s = Searcher(manhattan_heuristic(shape))
    dist, states = sample_states(shape, 0, seed=1)
    s.solve(Board(shape, states[0]), threads=2)  # the kernel loaded
    search = kernel.search_slice

    def broken(*args):
        if threading.current_thread() is not threading.main_thread():
            raise DatabaseError("t.h5: dataset x fails its block digest")
        return search(*args)

    monkeypatch.setattr(kernel, "search_slice", broken)
    with pytest.raises(DatabaseError, match="t.h5"):
        s.solve(Board(shape, states[0]), threads=2)


@pytest.mark.parametrize("threads", THREADS)
def test_expanded_nodes_are_counted(split, threads):
    """Each expansion generates 1 to 3 children (4 at a root): the two counts bracket each
    other, on one thread and summed over several."""
    shape = Shape.devquiz(3, 3)
    dist, states = sample_states(shape, 10, seed=2)
    s = Searcher(manhattan_heuristic(shape))
    for cells in states[:6]:
        res = s.solve(Board(shape, cells), threads=threads)
        assert res.length == dist[cells]
        assert res.expanded <= res.nodes + 1 and res.nodes <= 3 * res.expanded + 64, (res.nodes, res.expanded)
        assert res.expanded >= res.length


def test_the_kernel_runs_without_the_gil():
    """What lets one board's threads, and a dask worker's threads, search at once."""
    assert kernel.search_slice.targetoptions.get("nogil") is True


def test_every_array_a_search_thread_writes_lies_alone_on_its_cache_lines(tmp_path):
    """The root's arrays, the stack, the state vector and the goal table's scratch key
    of each thread (and of a one-thread search) are written node after node: no other
    object may share their cache lines, or threads would take the lines from one
    another's caches (two one-thread searches in one process ran at half speed)."""
    from solver.search.state import PAD, new_stack, private

    shape = Shape.devquiz(3, 3)
    build_pdb(shape, named_partition(shape, "4-4"), tmp_path)
    build_goal_table(shape, 6, tmp_path)
    s = Searcher(heuristic_for(shape, tmp_path))
    assert s.h.lookups and s.h.goal_table is not None
    board = read_board_arg("3,3,123405786").records[0].board

    def alone(name, a):
        if a.size == 0:  # (nothing to write: a stack's frontier buffer outside an A* part)
            return
        base = a.base
        assert base is not None and base.base is None, name  # a view into a buffer of its own
        before = a.ctypes.data - base.ctypes.data
        after = base.ctypes.data + base.nbytes - (a.ctypes.data + a.nbytes)
        assert before >= PAD and after >= PAD, (name, before, after)

    w = parallel.Worker(s, board, 40, kernel, s.fsm_root(board))
    written = {f"root {i}": x for i, x in enumerate(w.root)}
    written.update({f"stack {k}": x for k, x in w.stack._asdict().items()})
    written.update({"state": w.state, "goal key": w.goal.key})
    written.update({f"one-thread root {i}": x for i, x in enumerate(s.root_state(board).arrays())})
    written["one-thread goal key"] = s.goal.key
    written.update({f"one-thread stack {k}": x for k, x in new_stack(40, s.ngroups)._asdict().items()})
    written["an A* part's frontier buffer"] = new_stack(40, s.ngroups, emit=(4, 30)).emit
    for name, a in written.items():
        alone(name, a)
    grid = private((3, 5), np.uint64)
    assert grid.shape == (3, 5) and grid.dtype == np.uint64 and grid.flags.c_contiguous and not grid.any()


def test_cli_threads_reach_the_search(tmp_path, monkeypatch):
    seen = []
    solve = Searcher.solve

    def spy(self, board, **kw):
        seen.append(kw.get("threads"))
        return solve(self, board, **kw)

    monkeypatch.setattr(Searcher, "solve", spy)
    monkeypatch.setattr(parallel, "default_threads", lambda: 4)  # 3 threads help on 4 cores: not held back
    run = CliRunner().invoke
    r = run(
        main,
        [
            "solve",
            "--json",
            "--no-db",
            "--threads",
            "3",
            "--no-fallback",
            "--node-limit",
            "5000",
            "4,4,123456789ABCDEF0",
        ],
    )
    assert r.exit_code == 0 and seen == [3]
    seen.clear()
    r = run(main, ["solve", "--no-db", "3,3,123456708"])  # one board: every core by default
    assert r.exit_code == 0 and seen == [parallel.default_threads()]
    seen.clear()
    two = tmp_path / "two.txt"
    two.write_text("3,3,123456708\n3,3,123450786\n")
    r = run(main, ["solve", "--no-db", "--workers", "1", str(two)])  # several boards: one thread each
    assert r.exit_code == 0 and seen == [1, 1]
    r = run(main, ["solve", "--threads", "0", "--no-db", "3,3,123456708"])
    assert r.exit_code == 2 and "--threads" in r.output


@pytest.mark.parametrize("threads", (1, 2))
def test_a_stop_whose_exception_python_dropped_still_ends_the_search(monkeypatch, split, threads):
    """SIGTERM's and Ctrl-C's handler sets the stop flag, then raises KeyboardInterrupt;
    Python drops an exception raised while it runs a callback of its own (numba's weakref
    callbacks: "Exception ignored in ..."), so the search looks at the flag between its
    slices: a search on a board far beyond Manhattan distance's reach ends within a slice
    of the flag being set, serial or threaded, and says it was interrupted."""
    import solver.search.limits as limits

    monkeypatch.setattr(limits, "_stopping", False)
    board = read_board_arg("6,5,9304781Q2==5=S=INLPKGMC6ERHJ=O").records[0].board
    s = Searcher(manhattan_heuristic(board.shape))
    timer = threading.Timer(1.0, setattr, (limits, "_stopping", True))  # the flag alone, no exception
    t0 = time.perf_counter()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            s.solve(board, threads=threads, time_limit=60)
    finally:
        timer.cancel()
    assert time.perf_counter() - t0 < 15
    assert threads == 1 or split  # the threads searched (windows were taken)


def test_a_killed_threaded_solve_leaves_no_answer_file(tmp_path):
    """SIGTERM in the middle of a threaded iteration: the process ends and the answer
    file is either absent or complete, never half-written."""
    out = tmp_path / "a.txt"
    board = "6,5,9304781Q2==5=S=INLPKGMC6ERHJ=O"  # far beyond Manhattan distance's reach
    cmd = [
        sys.executable,
        "-X",
        "faulthandler",  # SIGABRT prints every thread's stack, should it not stop
        "-m",
        "solver",
        "solve",
        "--no-db",
        "--no-fallback",
        "--threads",
        "2",
        "--out",
        str(out),
        board,
    ]
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    time.sleep(4)  # well inside the threaded iterations
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        p.send_signal(signal.SIGABRT)
        stacks = p.communicate(timeout=30)[1].decode(errors="replace")
        pytest.fail(f"a threaded search did not stop on SIGTERM; its threads:\n{stacks[-4000:]}")
    # stopped as interrupted (130), or by the signal itself if it came before the handler
    assert p.returncode in (130, -signal.SIGTERM), p.stderr.read().decode(errors="replace")
    assert not out.exists() or out.read_text() in ("\n", "")
    assert not list(tmp_path.glob(".a.txt*")), list(tmp_path.iterdir())
