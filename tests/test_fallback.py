"""The fallback (solver/fallback/): beams, staged search, polishing and a walled board's own
layout tables; every answer simulated and held against breadth-first lengths, never
shorter than optimal."""

import random

import pytest

from pdb_builder.board import Board, Shape
from pdb_builder.formats import read_board_arg
from pdb_builder.moves import check_moves
from solver.fallback import staged
from solver.fallback.beam import beam_search
from solver.fallback.polish import polish
from solver.fallback.staged import staged_search
from solver.search.heuristic import manhattan_heuristic
from solver.search.limits import Limits
from solver.search.searcher import Searcher
from solver.tuning import tuning

from .naive import bfs_distances
from .test_inspect import walk


@pytest.mark.parametrize("walls", [(), (4,), (1, 3)])
def test_beam_answers_reach_the_goal_and_are_never_shorter_than_optimal(walls):
    shape = Shape.devquiz(3, 3, list(walls))
    dist = bfs_distances(shape)  # from the goal: the distance of every reachable state
    searcher = Searcher(manhattan_heuristic(shape))
    for seed in range(8):
        board = read_board_arg(walk(shape, steps=300, seed=seed)).records[0].board
        for width in (1, 64):
            moves = beam_search(searcher, board, width=width)
            if moves is None:
                assert width == 1  # a beam of one can die out at a dead end
                continue
            assert check_moves(board, moves).ok and len(moves) >= dist[board.cells]


@pytest.mark.parametrize(
    "shape",
    [
        Shape.devquiz(4, 4),
        Shape.korf(4, 4),
        Shape.devquiz(4, 4, [5, 9]),
        Shape.devquiz(5, 4, [6, 11]),
        Shape.devquiz(4, 4, [1, 6, 11]),
        Shape.devquiz(5, 3, [6, 8]),
    ],
    ids=lambda s: s.key,
)
def test_staged_answers_reach_the_goal(shape):
    """Rings round walls (4x4 w5,9; the 5x4 layout of DevQuiz line 407), corridors and
    dead ends (a diagonal of walls), plain boards: every answer simulates to the goal."""
    for seed in range(3):
        board = read_board_arg(walk(shape, steps=500, seed=seed)).records[0].board
        moves = staged_search(board)
        assert moves is not None and check_moves(board, moves).ok


def test_staged_answers_the_board_every_other_search_gave_up_on():
    board = read_board_arg("5,4,BD6A3G=1F9H=E24IJ805").records[0].board  # DevQuiz line 407
    moves = staged_search(board)
    assert moves is not None and check_moves(board, moves).ok and len(moves) >= 63  # its proven lower bound


@pytest.mark.parametrize(
    "line",
    ["5,5,1C3246980A7E=5=B=JIKGLONM", "6,6,7KF56C3DG4=I1J2AH98LV=0OPQ=UTNWEXSZY"],
    ids=["devquiz-3607", "devquiz-2663"],
)
def test_staged_backward_pass_answers_boards_the_forward_pass_leaves_in_a_ring(line):
    """DevQuiz lines 3607 and 2663: forwards, the stages end in one long ring with a short
    cut round the blank's goal, which no table-bounded search finishes; backwards (from the
    goal to the board) they end round the start's blank, and the inverted answer is valid."""
    board = read_board_arg(line).records[0].board
    moves = staged._one_pass(staged.reversed_board(board), 0, staged.TABLE_BITS, Limits(), staged.FINAL_NODES)
    assert moves is not None and check_moves(board, staged.undo(moves)).ok


def test_staged_refuses_an_unsolvable_board():
    assert staged_search(read_board_arg("3,3,213456780").records[0].board) is None


@pytest.mark.parametrize(
    "shape", [Shape.devquiz(3, 3), Shape.devquiz(3, 3, [4]), Shape.devquiz(2, 4)], ids=lambda s: s.key
)
def test_polish_keeps_answers_valid_and_never_below_optimal(shape):
    """The reverse of a long random walk of the blank is a valid, wandering answer:
    polishing shortens it, to no less than the BFS distance."""
    dist = bfs_distances(shape)
    back = {"L": "R", "R": "L", "U": "D", "D": "U"}
    for seed in range(3):
        rng = random.Random(seed)
        cells, b, walk_moves = list(shape.goal), shape.goal_blank, []
        for _ in range(120):
            d = rng.choice(shape.neighbours[b])
            walk_moves.append({-1: "L", 1: "R", -shape.width: "U", shape.width: "D"}[d - b])
            cells[b], cells[d], b = cells[d], 0, d
        board = Board(shape, tuple(cells))
        moves = "".join(back[m] for m in reversed(walk_moves))
        assert check_moves(board, moves).ok
        shorter = polish(board, moves, time_limit=5)
        assert check_moves(board, shorter).ok and dist[board.cells] <= len(shorter) < len(moves)


@pytest.mark.parametrize(
    "shape, sample",
    [
        (Shape.devquiz(3, 3, [1]), None),
        (Shape.devquiz(4, 3, [1, 6]), None),
        (Shape.korf(3, 3), 20_000),  # 181,440 states: every one in the slow lane
        pytest.param(Shape.korf(3, 3), None, marks=pytest.mark.slow),
    ],
    ids=lambda x: getattr(x, "key", "every" if x is None else str(x)),
)
def test_fallback_layout_tables_never_overestimate(shape, sample):
    """The tables the fallback builds in memory, for a shape and for a reversed board's
    custom goal, against exhaustive BFS (or a ``sample`` of its states)."""
    import random

    from solver.fallback.ladder import layout_searcher

    dist = bfs_distances(shape)
    searcher = layout_searcher(shape, Limits())
    assert searcher is not None and searcher.h.lookups
    raised = 0
    states = list(dist.items())
    if sample:
        states = random.Random(0).sample(states, sample)
    for cells, d in states:
        h = searcher.initial_h(Board(shape, cells))
        assert h <= d, (cells, h, d)
        raised += h > shape.manhattan(cells)
    assert raised  # the tables see what Manhattan distance does not
    far = max(dist, key=dist.get)
    back = staged.reversed_board(Board(shape, far))
    back_searcher = layout_searcher(back.shape, Limits())
    assert back_searcher.initial_h(back) <= dist[far]


@pytest.mark.slow  # the fallback's 6 s limits: its verdict waits on the machine
def test_fallback_answers_a_ring_board_manhattan_beams_cannot():
    """DevQuiz line 2903: walls leave one ring; the Manhattan beam dies out, the layout
    tables' beams (forwards or backwards) answer within the fallback's limits."""
    from solver.fallback.ladder import fallback_search

    board = read_board_arg("5,5,B234017==N6=KF5G=IDELMJOA").records[0].board
    searcher = Searcher(manhattan_heuristic(board.shape))
    assert beam_search(searcher, board, width=1024) is None
    moves, how, *_ = fallback_search(searcher, board, 6, None, searcher.initial_h(board))
    assert moves is not None and "layout tables" in how and check_moves(board, moves).ok


@pytest.mark.slow  # the fallback's 6 s limits: its verdict waits on the machine
def test_fallback_answers_a_ring_board_its_own_tables_mislead():
    """The same ring board searched on plain tables of its own layout (as with a
    layout database): the first beam dies out and weighted IDA* finds nothing in its
    share; the beams on those tables, forwards and backwards, answer."""
    from solver.fallback.ladder import fallback_search, layout_searcher

    board = read_board_arg("5,5,B234017==N6=KF5G=IDELMJOA").records[0].board
    searcher = layout_searcher(board.shape, Limits(), zero_aware=False)
    assert searcher.h.lookups and beam_search(searcher, board, width=1024) is None
    moves, how, *_ = fallback_search(searcher, board, 6, None, searcher.initial_h(board))
    assert moves is not None and "layout tables" in how and check_moves(board, moves).ok


def test_a_beam_on_zero_aware_tables_answers_the_ring_board_plain_ones_mislead():
    """The ring board above: under each pattern of its layout the blank has several
    regions, and a plain table keeps the cheapest.  With each region's cost
    (zero-aware tables, as the fallback builds them) the root estimate rises and a
    1024-wide beam answers, where on the plain tables it dies out; both estimates stay
    at most the answer's length, and the answer simulates."""
    from solver.fallback.ladder import layout_searcher

    board = read_board_arg("5,5,B234017==N6=KF5G=IDELMJOA").records[0].board
    plain = layout_searcher(board.shape, Limits(), zero_aware=False)
    zero = layout_searcher(board.shape, Limits())
    assert any(lk.zero is not None for lk in zero.h.lookups)
    assert beam_search(plain, board, width=1024) is None
    moves = beam_search(zero, board, width=1024)
    assert moves is not None and check_moves(board, moves).ok
    assert plain.initial_h(board) < zero.initial_h(board) <= len(moves)


def test_a_beams_zero_aware_values_are_those_of_each_state_afresh():
    """The beam updates a state's lookups only where the moved tile is theirs (only
    such a move takes the blank to another region under a pattern): after 16 levels
    each state's values equal those the searcher computes for the state from scratch."""
    from solver.fallback.beam import Beam
    from solver.fallback.ladder import layout_searcher

    board = read_board_arg("5,5,B234017==N6=KF5G=IDELMJOA").records[0].board
    zero = layout_searcher(board.shape, Limits())
    beam = Beam(zero, board, width=64)
    for _ in range(2):
        assert not beam.advance(Limits())
    differ = 0
    for j in range(int(beam.counts[0])):
        cells = tuple(t if t < 0 else int(v) for t, v in zip(board.cells, beam.cur[j]))
        fresh = zero.root_state(Board(board.shape, cells)).lk_val[: zero.nlookups]
        differ += list(fresh) != list(beam.cur_lk[j, : zero.nlookups])
    assert beam.counts[0] == 64 and differ == 0


@pytest.mark.slow  # the fallback's 6 s limits: its verdict waits on the machine
def test_fallback_tries_a_ring_boards_own_tables_beams_before_weighted_ida(monkeypatch):
    """A walled board whose first beam on its own tables fails (a ring): the beams on
    those tables, forwards and backwards, come before weighted IDA*, which rarely
    answers such a board and used to take half the search time first."""
    from solver.fallback import ladder

    board = read_board_arg("5,5,B234017==N6=KF5G=IDELMJOA").records[0].board
    searcher = ladder.layout_searcher(board.shape, Limits(), zero_aware=False)
    steps = []
    real_beams, real_solve = ladder.Ladder.beams, Searcher.solve

    def record_beams(*a, **k):
        steps.append("beams")
        return real_beams(*a, **k)

    def record_solve(self, *a, **k):
        if k.get("weight"):
            steps.append("weighted")
        return real_solve(self, *a, **k)

    monkeypatch.setattr(ladder.Ladder, "beams", record_beams)
    monkeypatch.setattr(Searcher, "solve", record_solve)
    moves, how, *_ = ladder.fallback_search(searcher, board, 6, None, searcher.initial_h(board))
    assert moves is not None and "layout tables" in how and check_moves(board, moves).ok
    assert steps and steps[0] == "beams"


def test_the_ladders_two_directions_take_turns_by_time_not_by_levels(monkeypatch):
    """Forwards on a board's large tables a beam level costs far more than backwards on
    the small tables built for the reversed board: the backward beam that answers after
    10 cheap levels must not wait for 10 dear forward levels.  Fake beams on a fake clock:
    forward levels take 1 s and never answer, backward ones 0.1 s and answer at the 10th;
    the pair has 4 s (level by level it would need 11)."""
    from solver.fallback import ladder
    from solver.search import limits

    clock = [0.0]
    monkeypatch.setattr(limits.time, "perf_counter", lambda: clock[0])

    class FakeBeam:
        def __init__(self, searcher, board, width, depth):
            self.forward, self.levels, self.moves, self.width = searcher == "own", 0, None, width

        def advance(self, limits):
            if limits.out():
                return True
            clock[0] += 1.0 if self.forward else 0.1
            self.levels += 1
            if not self.forward and self.levels == 10:
                self.moves = "LLUU"
                return True
            return False

    monkeypatch.setattr(ladder, "Beam", FakeBeam)
    rungs = ladder.Ladder(None, 10, "own")
    rungs.back_board, rungs.back = "reversed board", "reversed"
    moves, how = rungs.beams(Limits(4.0 / ladder.LADDER_SHARE), (1024,))
    assert moves == "DDRR" and how == "beam width 1024 backwards on layout tables"
    assert clock[0] <= 4.0


@pytest.mark.parametrize("back_answers_at", [1024, 4096])
def test_the_ladder_builds_the_boards_own_tables_only_when_the_first_backward_beam_fails(monkeypatch, back_answers_at):
    """Forward tables not built yet (a callable): the first width's backward beam goes
    alone; where it answers, the forward tables are never built; where it fails, they
    are, and the next widths take both directions."""
    from solver.fallback import ladder

    made, runs = [], []

    class FakeBeam:
        def __init__(self, searcher, board, width, depth):
            self.searcher, self.width, self.moves = searcher, width, None

        def advance(self, limits):
            runs.append((self.searcher, self.width))
            if self.searcher == "reversed" and self.width == back_answers_at:
                self.moves = "LU"
            return True

    monkeypatch.setattr(ladder, "Beam", FakeBeam)
    rungs = ladder.Ladder(None, 10, lambda: made.append(1) or "own")
    rungs.back_board, rungs.back = "reversed board", "reversed"
    moves, how = rungs.beams(Limits(60.0), (1024, 4096))
    assert moves == "DR" and how == f"beam width {back_answers_at} backwards on layout tables"
    if back_answers_at == 1024:
        assert runs == [("reversed", 1024)] and not made and rungs.built is None
    else:
        assert runs[0] == ("reversed", 1024) and ("own", 1024) in runs and ("reversed", 4096) in runs
        assert made == [1] and rungs.built == "own"


def test_the_ladder_passes_over_the_widths_that_failed_before_and_adds_those_that_fail(monkeypatch):
    """A beam is the same search each time on the same tables: a width whose beams both
    ended without an answer on an earlier try is passed over; one that fails now, inside
    its share, is added to ``failed`` (kept for the next try)."""
    from solver.fallback import ladder

    runs = []

    class FakeBeam:
        def __init__(self, searcher, board, width, depth):
            self.searcher, self.width, self.moves = searcher, width, None

        def advance(self, limits):
            runs.append((self.searcher, self.width))
            if self.width == 65536:
                self.moves = "LU"
            return True

    monkeypatch.setattr(ladder, "Beam", FakeBeam)
    rungs = ladder.Ladder(None, 10, "own", failed=(1024, 4096))
    rungs.back_board, rungs.back = "reversed board", "reversed"
    moves, how = rungs.beams(Limits(60.0), (1024, 4096, 32768, 65536))
    assert moves == "DR" and how == "beam width 65536 backwards on layout tables"
    assert {w for _, w in runs} == {32768, 65536} and rungs.failed == {1024, 4096, 32768}


def _layout_in_child(queue):
    from solver.fallback.ladder import layout_searcher

    board = read_board_arg("5,5,B234017==N6=KF5G=IDELMJOA").records[0].board
    queue.put(layout_searcher(board.shape, Limits()).initial_h(board))


def test_fallback_tables_build_in_a_worker_forked_after_a_parallel_build():
    """``slidepdb run`` builds with numba threads, then forks its solvers; GNU OpenMP
    (numba's usual threading layer on Linux) terminates a forked child that starts
    threads, so the fallback's tables must build on the worker's own thread."""
    import multiprocessing as mp

    from pdb_builder.make.building import compute_pdb

    board = read_board_arg("5,5,B234017==N6=KF5G=IDELMJOA").records[0].board
    compute_pdb(board.shape, (1, 2, 3, 4))  # parallel, in this process
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_layout_in_child, args=(queue,))
    child.start()
    child.join(120)
    assert child.exitcode == 0, "the forked worker died building the fallback's tables"
    assert queue.get(timeout=5) >= Searcher(manhattan_heuristic(board.shape)).initial_h(board)


@pytest.mark.parametrize(
    "shape", [Shape.devquiz(3, 3, [1]), Shape.devquiz(4, 3, [5, 6]), Shape.korf(4, 2, [3])], ids=lambda s: s.key
)
def test_walled_board_without_tables_switches_to_layout_tables_at_bfs_lengths(monkeypatch, shape, tune):
    """A walled board no table serves: Manhattan search first, then (past
    the tuning's layout_after_nodes) the search again on tables of its layout built in memory;
    lengths, bounds and proofs against exhaustive BFS."""
    from pdb_builder.formats import Record
    from solver.api import SolverPool, solve_record

    tune(layout_after_nodes=30)
    pool = SolverPool(use_db=False)
    dist = bfs_distances(shape)
    switched = 0
    for k, cells in enumerate(random.Random(3).sample(sorted(dist), 40)):
        board = Board(shape, cells)
        out = solve_record(Record(k, str(board), board), pool)
        assert out.optimal and out.length == dist[cells] and out.h0 <= dist[cells]
        assert check_moves(board, out.moves).ok
        switched += any("in memory" in name for name in out.heuristic)
    assert switched  # the far boards went past the Manhattan slice


def test_ring_board_without_tables_is_proven_on_its_layout_tables():
    """DevQuiz board 520 (6x5, six walls): within 30 M nodes Manhattan distance alone
    proves nothing (a fallback answers, 113 moves in the no-database run), while
    IDA* on the layout's tables built in memory completes its iterations (node
    limits: the same on any machine's load)."""
    from pdb_builder.formats import Record
    from solver.api import SolverPool, solve_record

    board = read_board_arg("6,5,=45EDB=3=A8GPLS2=FJ0T==6KQROIC").records[0].board
    out = solve_record(Record(1, str(board), board), SolverPool(use_db=False), node_limit=30_000_000)
    assert out.optimal and out.lower_bound == out.length and check_moves(board, out.moves).ok
    assert out.fallback is None and any("in memory" in name for name in out.heuristic)
    alone = Searcher(manhattan_heuristic(board.shape)).solve(board, node_limit=30_000_000)
    assert alone.status == "limit" and alone.lower_bound < out.length


@pytest.mark.slow  # the fallback's 2 s limits: its verdict waits on the machine
def test_a_ring_board_marked_so_skips_the_manhattan_beam_for_its_layout_tables(monkeypatch):
    """``first_beam=False`` (a board whose first beam failed before): no Manhattan beam,
    straight to the layout's tables; the answer simulates."""
    from solver.fallback import ladder

    board = read_board_arg("5,5,B234017==N6=KF5G=IDELMJOA").records[0].board
    searcher = Searcher(manhattan_heuristic(board.shape))
    beams, real_beam = [], ladder.beam_search
    monkeypatch.setattr(ladder, "beam_search", lambda *a, **k: beams.append(k.get("width")) or real_beam(*a, **k))
    moves, how, *_ = ladder.fallback_search(searcher, board, 2.0, None, searcher.initial_h(board), first_beam=False)
    assert moves is not None and check_moves(board, moves).ok and "layout tables" in how
    assert not beams


@pytest.mark.parametrize("limit", [0.2, 2.0])
def test_the_layout_tables_are_small_when_little_search_time_is_left(monkeypatch, limit, tune):
    """Under the tuning's ``layout_seconds`` of search time left, step 2 builds patterns of at most
    ``LAYOUT_SMALL`` bytes (quicker to build, nearly as good for the beams); with more,
    of ``LAYOUT_MEMORY``; the reversed board's tables first."""
    from solver.fallback import ladder

    board = read_board_arg("5,5,B234017==N6=KF5G=IDELMJOA").records[0].board
    searcher = Searcher(manhattan_heuristic(board.shape))
    built = []
    tune(layout_seconds=1.0)  # (a limit of 2 s leaves 3.5 s of search time)
    monkeypatch.setattr(
        ladder,
        "layout_searcher",
        lambda shape, limits, use_lc=False, memory=0: built.append((shape.goal == board.shape.goal, memory)),
    )
    ladder.fallback_search(searcher, board, limit, None, searcher.initial_h(board), first_beam=False)
    memory = ladder.LAYOUT_SMALL if limit * ladder.SEARCH_TIMES < tuning().layout_seconds else ladder.LAYOUT_MEMORY
    assert built == [(False, memory), (True, memory)]


@pytest.mark.parametrize("before", ["small", "large"])
def test_widths_that_failed_on_smaller_tables_are_passed_over_on_larger_ones(monkeypatch, before, tune):
    """A width whose beams failed on tables of some size is passed over on tables of that
    size or larger (the larger tables rarely change which widths answer, and rebuilding
    both directions' tables leaves a retry little time), not on smaller ones."""
    from solver.fallback import ladder

    board = read_board_arg("5,5,B234017==N6=KF5G=IDELMJOA").records[0].board
    searcher = Searcher(manhattan_heuristic(board.shape))
    given = []

    class Rungs:
        def __init__(self, board, lower_bound, forward, memory, failed=()):
            given.append((memory, tuple(failed)))
            self.failed, self.back, self.built = set(failed), None, None

        def beams(self, limits, widths):
            return None, None

    monkeypatch.setattr(ladder, "Ladder", Rungs)
    monkeypatch.setattr(ladder, "staged_search", lambda board, limits: None)
    tune(layout_seconds=1.0)
    size = {"small": ladder.LAYOUT_SMALL, "large": ladder.LAYOUT_MEMORY}
    for limit, memory in ((2.0, ladder.LAYOUT_MEMORY), (0.2, ladder.LAYOUT_SMALL)):
        given.clear()
        failed = (size[before], (1024,))
        ladder.fallback_search(searcher, board, limit, None, 10, first_beam=False, failed=failed)
        assert given == [(memory, (1024,) if failed[0] <= memory else ())]


def test_a_ring_retry_skips_the_first_beam_and_hands_on_the_widths_that_failed(monkeypatch):
    """A board marked ring (Known.ring) at a later answer step: its optimal search gets
    ``RING_PROOF`` of the limit and the fallback its own limits plus what the proof left
    (the board's time is the same); the fallback skips its first beam and is told the
    widths that failed before; the widths that fail now are recorded (``ladder_failed``)
    for the next step."""
    import solver.api as api
    from pdb_builder.formats import Record
    from solver.fallback import ladder
    from solver.outcome import Known

    seen = {}
    real = api.optimal_search

    def proof(board, searcher, pool, time_limit, *rest):
        seen["proof"] = time_limit
        return real(board, searcher, pool, time_limit, *rest)

    def fallback(searcher, board, time_limit, node_limit, bound, layout, first_beam, failed):
        seen["fallback"], seen["first_beam"], seen["failed"] = time_limit, first_beam, failed
        return ladder.Fallback(None, None, 0, (3 << 20, (1024, 4096)))

    monkeypatch.setattr(api, "optimal_search", proof)
    monkeypatch.setattr(ladder, "fallback_search", fallback)
    board = read_board_arg("6,6,40G9E31DJA56872F=BP===NZVWR=CUXQYTOI").records[0].board
    ring = (3 << 20, (1024,))
    out = api.solve_record(Record(1, str(board), board), api.SolverPool(use_db=False), 0.4, known=Known(61, None, ring))
    assert out.status == "limit" and out.ladder_failed == [3 << 20, [1024, 4096]]
    extra = (1 - api.RING_PROOF) * 0.4 / ladder.FALLBACK_TIMES
    assert seen["proof"] == pytest.approx(0.4 * api.RING_PROOF) and seen["fallback"] == pytest.approx(0.4 + extra)
    assert not seen["first_beam"] and seen["failed"] == ring
