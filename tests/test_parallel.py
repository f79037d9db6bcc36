"""One board searched by several threads (solver.search.threads): lengths against
breadth-first search and published optima, never against the serial kernel alone, and
every node searched once (limits, errors and the CLI: tests/test_parallel_limits.py).
The ``split`` fixture (tests/conftest.py) makes every iteration past a few dozen nodes
go parallel and hand work over every few nodes, so small boards exercise what a hard
one does."""

import threading

import numpy as np
import pytest

import solver.search.sources as sources
import solver.search.threads as parallel
from pdb_builder.board import Board, Shape
from pdb_builder.formats import read_file
from pdb_builder.make.building import build_goal_table, build_pdb
from pdb_builder.moves import check_moves
from pdb_builder.patterns import named_partition
from solver.search.heuristic import manhattan_heuristic
from solver.search.searcher import Searcher
from solver.search.state import slots
from solver.search.tables import heuristic_for

from .conftest import THREADS, Restless, data_file, sample_states


def spec(s, h0, last):
    """A complete iteration of ``s`` at threshold ``h0 + 6``, planned from ``last``."""
    return sources.IterationSpec(h0 + 6, 100, s.bpmx, None, None, 0, last, 200, s.automaton)


def _agree(searcher, shape, dist, states, threads):
    for cells in states:
        board = Board(shape, cells)
        res = searcher.solve(board, threads=threads)
        assert res.optimal and res.length == dist[cells], (str(board), threads, res.length, dist[cells])
        assert check_moves(board, res.moves).ok
        assert res.nodes > 0 or dist[cells] == 0


@pytest.mark.parametrize("threads", THREADS)
@pytest.mark.parametrize(
    "shape",
    [Shape.devquiz(3, 3), Shape.korf(3, 3, [2]), Shape.devquiz(3, 3, [0]), Shape.korf(4, 2)],
    ids=lambda s: s.key,
)
@pytest.mark.parametrize("prune", [2, 8])
def test_lengths_equal_bfs_on_every_thread_count(split, shape, threads, prune):
    """On every thread count, with the undo-only automaton and a deeper one (every
    thread follows the same, so the split search still numbers the same nodes)."""
    dist, states = sample_states(shape, 25, seed=threads)
    _agree(Searcher(manhattan_heuristic(shape), prune=prune), shape, dist, states, threads)
    if threads > 1:
        assert split, "no iteration was ever split between threads"


@pytest.mark.parametrize(
    "shape",
    [Shape.devquiz(3, 3), Shape.korf(3, 3, [2]), Shape.devquiz(3, 3, [0]), Shape.korf(4, 2)],
    ids=lambda s: s.key,
)
def test_lengths_equal_bfs_while_threads_join_and_leave(split, shape):
    """A grant that changes at every look: threads start and stop mid-iteration, in
    and out of shared nodes, and every length is still the breadth-first one."""
    dist, states = sample_states(shape, 100, seed=7)  # (a hole here showed in about 1 search of 300)
    share = Restless(seed=len(states))
    s = Searcher(manhattan_heuristic(shape))
    _agree(s, shape, dist, states, share)
    assert max(share.reported) > 1 and share.left()
    assert s.solve(Board(shape, states[0]), threads=Restless(seed=1)).threads > 1


def test_an_iteration_starts_again_on_more_threads_only_where_that_pays():
    """Granted 4 threads (counted at 3.2 one-thread speeds) after 10 s of an iteration:
    again from its root when it is expected to run long, not when it is nearly through
    or the limit is too close for the threads to catch up."""
    from solver.search.driver import restart_pays

    assert restart_pays(4, 10.0, None, [])  # nothing known: it may run for ever
    assert not restart_pays(1, 0.1, None, [])
    assert restart_pays(4, 10.0, 60.0, [(40, 10**6, 5.0), (42, 5 * 10**6, 25.0)])  # expected 125 s
    assert not restart_pays(4, 10.0, 60.0, [(40, 10**6, 2.0), (42, 1.1 * 10**6, 11.0)])  # expected 12.1 s
    assert not restart_pays(4, 10.0, 4.0, [])  # 4 s left: 12.8 one-thread seconds, 10 of them to catch up
    assert restart_pays(2, 1.0, 4.0, [])


@pytest.mark.parametrize("threads", THREADS)
def test_tables_two_bit_copies_and_reflection_on_threads(split, tmp_path, threads):
    wall_free = Shape.devquiz(3, 3)
    build_pdb(wall_free, named_partition(wall_free, "4-4"), tmp_path)  # with two-bit copies
    for shape in (wall_free, Shape.devquiz(3, 3, [2])):  # a walled layout reads them through its walls
        s = Searcher(heuristic_for(shape, tmp_path))
        assert s.h.lookups and any(p is not None for p in s.packed)
        dist, states = sample_states(shape, 20, seed=5)
        _agree(s, shape, dist, states, threads)


@pytest.mark.parametrize("threads", (2, 4))
def test_goal_table_on_threads(split, tmp_path, threads):
    shape = Shape.devquiz(3, 3)
    build_goal_table(shape, 10, tmp_path)  # each thread needs its own scratch key for it
    s = Searcher(heuristic_for(shape, tmp_path))
    assert s.h.goal_table is not None
    dist, states = sample_states(shape, 30, seed=9)
    _agree(s, shape, dist, states, threads)


@pytest.mark.parametrize("threads", (2, 4, "restless"))
def test_korf_instances_at_published_lengths_on_threads(monkeypatch, threads, tune):
    tune(slice_nodes=20_000, par_slice=5_000)
    recs = [r for r in read_file(str(data_file("korf100.txt"))).records if r.ident in {"2", "5", "9"}]
    s = Searcher(manhattan_heuristic(recs[0].board.shape))
    for rec in recs:
        res = s.solve(rec.board, threads=Restless(seed=int(rec.ident)) if threads == "restless" else threads)
        assert res.optimal and res.length == rec.expected_length
        assert check_moves(rec.board, res.moves).ok


@pytest.mark.parametrize("window", (1, 3, 1000))
def test_a_complete_iteration_visits_the_same_nodes_on_any_thread_count(monkeypatch, window, tune):
    """Each node at the split depth is searched in exactly one thread's window, and
    above it every thread walks alike: a complete iteration visits the same nodes at
    every depth on 1, 2 and 4 threads, whatever the windows and however the threads
    interleave, and its next threshold is the same."""
    tune(par_slice=7)
    _interleave(monkeypatch)

    def plan(depth):  # a split at ``depth``
        return [0] * depth + [10**6] + [0] * 3

    def view(out, depth):
        return out.counts.tolist(), out.nodes, out.next_threshold

    _iterations_agree(monkeypatch, tune, window, (2, 5, 9), plan, view)


def _interleave(monkeypatch):
    """Every thread takes its first window once all have started: they interleave."""
    take, lock = parallel.Iteration._take, threading.Lock()

    def together(self, w, *args, **kw):
        with lock:
            if not hasattr(self, "start_line"):
                self.start_line = threading.Barrier(self.threads, timeout=30)
        if slots(w.state).hi == 0 and not args and not kw:
            self.start_line.wait()
        return take(self, w, *args, **kw)

    monkeypatch.setattr(parallel.Iteration, "_take", together)


def _iterations_agree(monkeypatch, tune, window, depths, plan, view):
    """A complete iteration of Korf's #1 and #3 (threshold h0 + 6) from the plan
    ``plan(depth)`` (the last iteration's nodes per depth), on 1, 2 and 4 threads:
    ``view(outcome, depth)`` is the same on each."""
    recs = [r for r in read_file(str(data_file("korf100.txt"))).records if r.ident in {"1", "3"}]
    s = Searcher(manhattan_heuristic(recs[0].board.shape))
    tune(window_nodes=window * 4)
    for rec in recs:
        h0 = s.initial_h(rec.board)
        for depth in depths:
            last = (np.array(plan(depth)), 10**6)
            seen = {}
            for threads in (1, 2, 4):
                out = parallel.Threads(threads).iteration(s, rec.board, spec(s, h0, last))
                assert out.status == "done"
                seen[threads] = view(out, depth)
            assert seen[1] == seen[2] == seen[4], (rec.ident, depth)


@pytest.mark.parametrize("window", (1, 3, 1000))
def test_threads_that_join_and_leave_mid_iteration_search_every_node_once(monkeypatch, window, tune):
    """A thread that joins walks from the root and takes the next window; one above a
    lowered grant stops once it has searched every number it took.  So a complete
    iteration whose threads come and go visits the same nodes at every depth as one
    thread, and its next threshold is the same."""
    tune(par_slice=7, window_nodes=window * 4)
    shares = _restless_agree((2, 5, 9), 2, lambda depth: [0] * depth + [10**6] + [0] * 3, lambda cnt, depth: cnt)
    assert any(share.left() for share in shares) and max(max(share.reported) for share in shares) > 1


@pytest.mark.parametrize("window", (1, 3))
def test_threads_that_join_and_leave_search_shared_nodes_once(monkeypatch, window, tune):
    """The same with shared nodes (a second split depth 3 below the first): a thread
    above the grant still helps with the windows shared nodes have left, so at and
    below the second depth, and above the first, a complete iteration visits the nodes
    one thread does, whatever the grant does (ten grants that change at every look)."""
    tune(par_slice=7, share_after=20, share_threads=1, window_nodes=window * 4)
    _restless_agree(
        (2, 5),
        10,
        lambda depth: [0] * depth + [10**6, 0, 0, 10**8] + [0] * 3,
        lambda cnt, depth: (cnt[:depth], cnt[depth + 3 :]),
    )


def _restless_agree(depths, seeds: int, plan, view) -> list:
    """A complete iteration of Korf's #1 and #3 (threshold h0 + 6) planned from
    ``plan(depth)`` (the last iteration's nodes per depth), on one thread and under
    ``seeds`` restless grants: ``view(counts, depth)`` and the next threshold are the
    same on each.  Returns the grants."""
    recs = [r for r in read_file(str(data_file("korf100.txt"))).records if r.ident in {"1", "3"}]
    s = Searcher(manhattan_heuristic(recs[0].board.shape))
    shares = []
    for rec in recs:
        h0 = s.initial_h(rec.board)
        for depth in depths:
            last = (np.array(plan(depth)), 10**6)
            one = parallel.Threads(1).iteration(s, rec.board, spec(s, h0, last))
            for seed in range(seeds):
                shares.append(Restless(seed))
                out = parallel.Threads(shares[-1]).iteration(s, rec.board, spec(s, h0, last))
                assert out.status == one.status == "done" and out.next_threshold == one.next_threshold
                assert view(out.counts.tolist(), depth) == view(one.counts.tolist(), depth), (rec.ident, depth, seed)
    return shares


@pytest.mark.parametrize("window", (1, 3))
def test_shared_nodes_are_searched_once_below_the_second_split_depth(monkeypatch, window, tune):
    """A node at the split depth that held its thread is shared: the threads that join
    it walk to it again, and each node at the second split depth is searched in
    exactly one window.  At and below that depth a complete iteration visits the nodes
    one thread does, above the split depth too, and its next threshold is the same;
    only the walks inside shared nodes, above the second depth, are repeated."""
    tune(par_slice=7, share_after=20, share_threads=1)
    shares = []
    share = parallel.Iteration._share

    def counted(self, w):
        before = len(self.shared)
        share(self, w)
        shares.append(len(self.shared) > before)

    monkeypatch.setattr(parallel.Iteration, "_share", counted)
    _interleave(monkeypatch)

    def plan(depth):  # a split at ``depth`` and a second one 3 deeper
        return [0] * depth + [10**6, 0, 0, 10**8] + [0] * 3

    def view(out, depth):
        cnt = out.counts.tolist()
        assert out.nodes >= sum(cnt[depth + 3 :])
        return cnt[:depth], cnt[depth + 3 :], out.next_threshold

    _iterations_agree(monkeypatch, tune, window, (2, 5), plan, view)
    assert any(shares)


def test_a_second_split_depth_is_planned_from_four_threads():
    """The shallowest depth below the split with 16 times its nodes; none on two threads,
    where the walks to a shared node cost more than they save."""
    counts = np.array([1, 4, 300, 2_000, 9_000, 40_000, 90_000, 30_000])
    assert sources.plan(counts, int(counts.sum()), 4)[0::2] == (2, 4)
    assert sources.plan(counts, int(counts.sum()), 16)[0::2] == (3, 5)
    assert sources.plan(counts, int(counts.sum()), 2)[0::2] == (2, 0)


def test_weighted_search_on_threads_stays_valid(split):
    shape = Shape.korf(3, 3, [2])
    dist, states = sample_states(shape, 10, seed=3)
    s = Searcher(manhattan_heuristic(shape))
    for cells in states:
        res = s.solve(Board(shape, cells), weight=200, threads=2)
        assert res.moves is not None and not (res.optimal and res.length > dist[cells])
        assert dist[cells] <= res.length <= 2 * dist[cells] + 1
        assert check_moves(Board(shape, cells), res.moves).ok
