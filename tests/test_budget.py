"""``slidepdb run --budget``: the rounds, the sittings a budget counts, the feed's last
start, builds given up or stopped when the budget ends, the forecast and the order of
a round's boards, and boards no pass started."""

import json
import time

import pytest

from pdb_builder.formats import read_file
from pdb_builder.moves import check_moves
from pdb_builder.patterns import BUILD_RATE
from solver.outcome import Outcome
from solver.run.clock import FakeClock
from solver.run.files import RunFiles
from solver.run.pipeline import run_pipeline
from solver.run.planning import (
    NOT_STARTED,
    RESERVE_MIN,
    reserve_for,
    round_boards,
    round_limit,
    with_filled_cuts,
    worth_waiting_for,
)
from solver.run.sittings import Sittings
from solver.tuning import tuning

from .conftest import slow_build, timeline, truth


@pytest.mark.slow
def test_budget_rounds_prove_what_the_full_pass_left(devquiz_slice, tmp_path):
    """--budget: rounds with doubled limits on the unproven boards, until none is left
    (the last one what the budget has left);
    a budget with no room for a board starts none.  Without a time limit the full pass's
    is planned from the budget: half of what is left at its start at one limit a board
    ((400 - 30 - the quick pass) / 2 / 18 boards, about 10 s; kept for later sittings),
    at least 5 s."""
    recs = read_file(str(devquiz_slice)).records
    out = tmp_path / "a.txt"
    # (no wall-free cuts: with them the rounds before the last prove every board of the slice)
    kw = dict(
        db_dir=tmp_path / "db",
        memory_limit=8 << 20,
        layout_memory=8 << 20,
        workers=1,
        quick_node_limit=1,
        wall_free_count=0,
        answers_first=False,  # the subject: the passes and rounds after the answer pass
    )
    t0 = time.time()
    res = run_pipeline(recs, out, time_limit=1.0, node_limit=300, budget=600, **kw)
    assert res.rounds and time.time() - t0 < 600
    assert all(o.optimal for o in res.outcomes.values())  # the slice's boards all fall in the rounds
    first_full = [o for o in res.full.outcomes.values() if not o.optimal]
    # round 1 tries the boards the full pass left whose forecast fits its limit
    assert first_full and 1 <= res.rounds[0][2] <= len(first_full)
    # round k at 2^k limits (a round whose boards all wait for a longer limit is not run)
    assert all(limit == 2.0**k for k, limit, *_ in res.rounds) and res.rounds[0][0] == 1
    answers = out.read_text().split("\n")[:-1]
    assert [len(m) for m in answers] == [truth(r) for r in recs]
    assert all(check_moves(r.board, m).ok for r, m in zip(recs, answers))
    steps = {r["step"] for r in timeline(out)}  # (the quick pass proved nothing: one node)
    assert "full" in steps and {f"round {k}" for k, *_ in res.rounds} & steps
    none = run_pipeline(recs, tmp_path / "b.txt", node_limit=300, budget=1, **kw)
    assert none.rounds == [] and not any(o.optimal for o in none.outcomes.values())  # none started
    assert none.full_limit == 5.0
    planned = run_pipeline(recs, tmp_path / "c.txt", node_limit=300, budget=400, **kw)
    assert len(recs) == 18 and 8 < planned.full_limit <= round(370 / 36, 1)
    assert Sittings.read(RunFiles(tmp_path / "c.txt").sittings).marks["limit"] == planned.full_limit
    assert {o.time_limit for o in planned.full.outcomes.values()} == {planned.full_limit}
    # the last round: what the budget has left, when that is less than twice the round before;
    # its boards start (a last round whose last start was the moment its limit was set started none)
    assert all(limit == planned.full_limit * 2**k for k, limit, *_ in planned.rounds[:-1])
    k, limit, tried = planned.rounds[-1][:3]
    assert limit < planned.full_limit * 2**k and tried >= 1


@pytest.mark.slow
def test_a_resumed_budget_counts_earlier_sittings_and_skips_rounds_they_ran(devquiz_slice, tmp_path):
    """--budget covers every sitting: a resume has what is left; a round's boards
    journalled at that round's limit in an earlier sitting are not tried again."""
    recs = read_file(str(devquiz_slice)).records
    out = tmp_path / "a.txt"
    kw = dict(db_dir=tmp_path / "db", memory_limit=8 << 20, layout_memory=8 << 20, workers=1, quick_node_limit=1)
    kw.update(time_limit=1.0, node_limit=300, answers_first=False)
    unproven = []

    def kill_in_round_one(o):
        if o.time_limit == 1.0 and not o.optimal:
            unproven.append(o.index)
        if o.time_limit == 2.0:
            raise KeyboardInterrupt

    first = run_pipeline(recs, out, budget=600, on_outcome=kill_in_round_one, **kw)
    assert first.interrupted and unproven and len(Sittings.read(RunFiles(out).sittings).spans) == 1
    spent = RunFiles(out).sittings
    real = spent.read_text()
    spent.write_text("1000.0 1001000.0\n" + real)  # an earlier sitting that spent the whole budget
    spent_all = run_pipeline(recs, out, budget=600, resume=True, **kw)
    assert spent_all.rounds == [] and spent_all.earlier[0] == 2 and spent_all.earlier[1] > 10**6
    assert ("earlier sittings", "2 (the budget counts them)") == spent_all.phase_rows(1.0)[-1][:2]
    spent.write_text(real)
    again = run_pipeline(recs, out, budget=600, resume=True, **kw)
    # the board round 1 had before the kill is skipped (others may wait for a longer limit)
    assert again.rounds[0][:2] == (1, 2.0) and again.rounds[0][2] <= len(unproven) - 1
    assert all(o.optimal for o in again.outcomes.values())
    spans = Sittings.read(RunFiles(out).sittings).spans
    assert len(spans) == 2 and spans[0][0] == float(real.split()[0]) and spans[1][0] >= spans[0][1]


@pytest.mark.slow
def test_the_automatic_budget_gives_the_rounds_the_time_the_passes_took(devquiz_slice, tmp_path):
    """budget="auto" (the command's default): the running time at the end of the full
    pass is recorded once; the rounds may run until twice that.  An earlier sitting of
    1000 s leaves them about 1000 s, so they prove every board the full pass left."""
    recs = read_file(str(devquiz_slice)).records
    out = tmp_path / "a.txt"
    kw = dict(db_dir=tmp_path / "db", memory_limit=8 << 20, layout_memory=8 << 20, workers=1, quick_node_limit=1)
    kw.update(time_limit=1.0, node_limit=300)
    RunFiles(out).sittings.write_text("1000.0 2000.0\n")
    t0 = time.time()
    res = run_pipeline(recs, out, budget="auto", resume=True, **kw)
    passes = Sittings.read(RunFiles(out).sittings).marks["passes"]
    assert 1000 < passes < 1000 + time.time() - t0
    assert res.rounds and all(o.optimal for o in res.outcomes.values())
    again = run_pipeline(recs, out, budget="auto", resume=True, **kw)  # nothing left: no round, the record kept
    sittings = Sittings.read(RunFiles(out).sittings)
    assert again.rounds == [] and sittings.marks["passes"] == passes and len(sittings.spans) == 3
    with pytest.raises(ValueError, match="budget 'soon'"):
        run_pipeline(recs, out, budget="soon", resume=True, **kw)


def test_the_automatic_disk_limit_is_half_the_free_space_kept_across_sittings(devquiz_slice, tmp_path, monkeypatch):
    import shutil
    from collections import namedtuple

    import solver.run.builds as builds

    usage = namedtuple("usage", "total used free")
    free = [8 << 30]
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(100 << 30, 0, free[0]))
    db = tmp_path / "not" / "made"
    assert builds.auto_disk_limit(db) == 4 << 30  # an empty folder (not made yet): half the free space
    recs = [r for r in read_file(str(devquiz_slice)).records if not r.board.shape.walls][:2]
    out = tmp_path / "a.txt"
    kw = dict(db_dir=db, memory_limit=8 << 20, workers=1, disk_limit="auto", budget=None)
    run_pipeline(recs, out, **kw)
    assert Sittings.read(RunFiles(out).sittings).marks["disk"] == 4 << 30
    held = builds.disk_used(db)
    assert 0 < held and builds.auto_disk_limit(db) == held + (4 << 30)
    free[0] = 2 << 30  # the disk filled up meanwhile: a resumed run keeps the first sitting's limit
    run_pipeline(recs, out, resume=True, **kw)
    assert Sittings.read(RunFiles(out).sittings).marks["disk"] == 4 << 30


def test_a_build_over_the_disk_limit_is_said_as_it_is_skipped(devquiz_slice, tmp_path, caplog):
    """The first build a disk limit holds back is logged as it happens (once a sitting),
    not only counted in the summary; its boards are still solved."""
    recs = [r for r in read_file(str(devquiz_slice)).records if not r.board.shape.walls][:2]
    with caplog.at_level("WARNING", logger="slidepdb.run"):
        res = run_pipeline(recs, tmp_path / "a.txt", db_dir=tmp_path / "db", workers=1, disk_limit=1, budget=None)
    said = [m for m in caplog.messages if "--disk-limit" in m]
    assert res.skipped_builds and len(said) == 1 and "not built" in said[0]
    assert all(res.outcomes[r.index].optimal for r in recs)


def test_sittings_count_running_time_across_kills(tmp_path):
    sit = Sittings(RunFiles(tmp_path / "a.txt").sittings, [[0.0, 100.0], [500.0, 530.0], [900.0, 900.0]])
    assert sit.spent_before == 130.0
    assert [sit.running(t) for t in (50.0, 510.0, 950.0)] == [50.0, 110.0, 180.0]
    sit.cover([140.0, 520.0])  # a board journalled after its sitting's last write
    assert sit.spans[0][1] == 140.0 and sit.spans[1][1] == 530.0 and sit.running(901.0) == 171.0


def test_a_feed_starts_nothing_after_its_last_start(devquiz_slice):
    from solver.run.feed import Feed

    recs = read_file(str(devquiz_slice)).records[:3]
    clock = FakeClock()
    feed = Feed(recs, last_start=clock.now() + 60, clock=clock)
    clock.advance(60.001)  # a millisecond past its last start
    assert feed.take() == ([], True)
    on_time = Feed(recs, last_start=clock.now() + 60, clock=clock)
    clock.advance(60.0)  # at its last start to the millisecond: still hands out
    got, ended = on_time.take()
    assert [r.index for r in got] == [r.index for r in recs] and ended


def test_boards_stop_waiting_for_builds_by_what_boards_take_not_by_their_limit(devquiz_slice):
    """1000 boards wait on a build, 2 at a time, 1000 s to the last start: at their
    5 s limit they could not all start (2500 s), but nothing is given up before a board
    has shown what one takes, nor while the boards that ended say 0.5 s (250 s); at
    about 10 s a board the build is given up and the boards go."""
    from dataclasses import replace

    from solver.run.feed import Feed, Job

    rec = read_file(str(devquiz_slice)).records[0]
    recs = [replace(rec, index=i) for i in range(1000)]
    job = Job(lambda: None, (), recs)
    clock = FakeClock()
    feed = Feed(recs, [job], last_start=clock.now() + 1000, board_seconds=5.0, clock=clock)
    assert [x for x in feed.take()[0]] == [job]
    assert feed.board_estimate(2) is None and feed.give_up(2, [job]) == []
    feed.ended(0.5)
    feed.ended(0.5)
    assert feed.board_estimate(2) == 0.5 and feed.give_up(2, [job]) == []
    for _ in range(18):
        feed.ended(11.0)
    assert feed.board_estimate(2) == pytest.approx(9.95)  # (2 x 0.5 + 18 x 11) / 20
    assert feed.give_up(2, [job]) == [job]
    assert len(feed.take()[0]) == 1000  # they wait no more
    late = Feed(recs, [job], last_start=clock.now() + 1.0, board_seconds=5.0, clock=clock)
    clock.advance(0.099)  # within the tenth of its time to the last start it spends learning
    assert late.board_estimate(2) is None and late.give_up(2, [job]) == []
    clock.advance(0.002)  # past it
    assert late.board_estimate(2) == 5.0 and late.give_up(2, [job]) == [job]


def test_boards_given_up_on_their_builds_start_each_once(devquiz_slice):
    """Give up builds not yet started while boards that need none wait beside them:
    every board is handed out exactly once (none twice: a second search of a board
    would stand in for the better outcome merged from the first; none lost)."""
    from dataclasses import replace

    from solver.run.feed import Feed, Job

    rec = read_file(str(devquiz_slice)).records[0]
    recs = [replace(rec, index=i) for i in range(60)]
    jobs = [Job(lambda: None, (), [r]) for r in recs[::3]]  # every third board waits on a build of its own
    clock = FakeClock()
    feed = Feed(recs, jobs, last_start=clock.now() + 1.0, board_seconds=5.0, clock=clock)
    clock.advance(0.15)  # past the tenth of its time to the last start it spends learning
    assert feed.give_up(2, []) == []  # none running: nothing to stop, the waiting boards go
    got, ended = feed.take()
    assert sorted(r.index for r in got) == list(range(60)) and ended


@pytest.mark.slow
def test_a_budget_ends_the_run_with_builds_in_flight(devquiz_slice, tmp_path, monkeypatch, tune):
    """Builds that would take ten minutes under a 20-second budget: the boards stop
    waiting for them while they can still all start (18 boards, 2 at a time, 0.75 s
    each: about 11 s in) and are answered without their tables, the builds running
    then are told to stop and named, and the run ends with its answer file, report and
    timeline written."""
    import solver.run.builds as builds

    tune(reserve=1.0)
    monkeypatch.setattr(builds, "build_pdb", slow_build)  # the forked workers see it too
    recs = read_file(str(devquiz_slice)).records
    t0 = time.perf_counter()
    kw = dict(db_dir=tmp_path / "db", memory_limit=8 << 20, quick_limit=0.5, workers=2, budget=20, answers_first=False)
    res = run_pipeline(recs, tmp_path / "a.txt", **kw)
    took = time.perf_counter() - t0
    assert took < 60, took  # not the builds' ten minutes
    assert res.failed_builds and all(f.how == "stopped" and "BuildStopped" in f.reason for f in res.failed_builds)
    answers = (tmp_path / "a.txt").read_text().splitlines()
    assert not res.interrupted and len(answers) == len(recs) and res.timeline.exists()
    # every board waited on a build that never ended: those answered stopped waiting in time
    answered = [(r, m) for r, m in zip(recs, answers) if m]
    assert answered and all(check_moves(r.board, m).ok for r, m in answered)


def test_a_proof_forecast_follows_the_iterations_and_goes_with_the_lower_bound(monkeypatch, tune):
    """The rounds' forecast: the next iteration is the last completed one times the
    growth the last two show (or the run's typical growth), the proof of an answer g
    moves above the bound g / 2 such iterations, at most two (a proof most likely ends
    there, however poor the answer), at the rate the search ran; an
    iteration a limit stopped counts at least 1.5 times what it searched.  When two
    attempts are merged, the cost record is the one of the attempt that reached the
    higher bound."""
    from solver.outcome import better
    from solver.run.forecast import GROWTH, proof_seconds, typical_growth

    def attempt(lower_bound, length, iterations=(), unfinished=None, optimal=False):
        return Outcome(
            0,
            "b",
            "solved",
            length=length,
            lower_bound=lower_bound,
            optimal=optimal,
            h0=30,
            moves="x" * length,
            iterations=[list(i) for i in iterations] or None,
            unfinished=list(unfinished) if unfinished else None,
        )

    slow = attempt(44, 46, [(40, 1000, 1.0), (42, 5000, 5.0)])  # 1,000 nodes/s: a kernel's load, not a search
    assert proof_seconds(slow) == pytest.approx(25_000 / tuning().min_rate)
    tune(min_rate=0.0)  # small numbers below
    shows = attempt(44, 48, [(40, 1000, 1.0), (42, 5000, 5.0)])  # 1,000 nodes/s, growth 5
    assert proof_seconds(shows) == pytest.approx((25_000 + 125_000) / 1000)  # iterations 44 and 46
    assert proof_seconds(attempt(44, 46, shows.iterations)) == pytest.approx(25.0)
    poor = attempt(44, 60, shows.iterations)  # far above: the iterations 44 and 46 alone, not 44 to 58
    assert proof_seconds(poor) == pytest.approx((25_000 + 125_000) / 1000)
    one = attempt(42, 46, [(40, 800, 1.0)])  # no growth of its own: the run's
    assert proof_seconds(one, typical=3.0) == pytest.approx((2400 + 7200) / 800)
    assert typical_growth([shows, one]) == 5.0 and typical_growth([one]) == GROWTH
    stopped = attempt(42, 44, [(40, 1000, 1.0)], unfinished=(42, 9000, 9.0))  # more than 5x the last already
    assert proof_seconds(stopped) == pytest.approx(13_500 / 1000)
    assert proof_seconds(attempt(44, 44)) == 0.0 and proof_seconds(attempt(40, 44)) is None  # nothing recorded
    assert proof_seconds(Outcome(0, "b", "limit", None, lower_bound=40, length=None)) is None
    later = attempt(46, 48, [(44, 30_000, 20.0)])
    assert better(shows, later).iterations == later.iterations
    assert better(later, shows).iterations == later.iterations  # either order
    kept = better(stopped, attempt(42, 46, [(40, 1000, 1.0)]))  # the same bound: the one that searched more of it
    assert kept.length == 44 and kept.unfinished == [42, 9000, 9.0]


def test_a_round_waits_only_for_builds_no_longer_than_its_searches():
    """A round's boards wait for their builds: a build is planned only when it takes (at
    BUILD_RATE) no longer than the round's searches of the boards it serves."""
    from types import SimpleNamespace as Plan

    small = Plan(entries=int(10 * BUILD_RATE), boards=1)  # 10 s of BFS for one board
    shared = Plan(entries=int(30 * BUILD_RATE), boards=3)
    large = Plan(entries=int(700 * BUILD_RATE), boards=1)
    assert worth_waiting_for([small, shared, large], 12.0) == [small, shared]
    assert worth_waiting_for([small, shared, large], 9.0) == []
    assert worth_waiting_for([large], 768.0) == [large]


def test_a_round_builds_the_filled_cut_where_it_can_wait_for_it_and_the_even_cuts_where_not():
    """A layout's filled plan (its even cuts and the one that fills the memory) replaces
    its even plan where the round can wait for it; where it cannot, the even plan is
    still built where that one is worth waiting for; the cheapest a board first."""
    from types import SimpleNamespace

    def plan(key, seconds, boards=1):
        return SimpleNamespace(shape=SimpleNamespace(key=key), entries=int(seconds * BUILD_RATE), boards=boards,
                               per_board=seconds * BUILD_RATE / boards)  # fmt: skip

    even = [plan("a", 5), plan("b", 8), plan("c", 50)]
    filled = [plan("a", 25), plan("b", 300), plan("c", 60), plan("d", 20)]  # d: its even cuts all built
    chosen = with_filled_cuts(even, filled, 30.0)
    assert [(p.shape.key, p.entries) for p in chosen] == [
        ("b", even[1].entries),
        ("d", filled[3].entries),
        ("a", filled[0].entries),
    ]
    assert with_filled_cuts(even, [], 30.0) == worth_waiting_for(even, 30.0)


def test_a_rounds_builds_add_the_filled_cut_of_a_layout_whose_even_cuts_stay_small(tmp_path):
    """Round 3 at 8K << 3 = 64K a pattern BFS on a 3x4 layout of 8 tiles: the even cuts
    stay 4-4, so for a board whose forecast proof is over the round's limit the round
    plans the 5-3 cut beside them where its limit can wait for it, and only the even
    ones where it cannot, or where the board's forecast fits the limit."""
    from pdb_builder.board import Board, Shape
    from pdb_builder.formats import read_lines
    from pdb_builder.make.building import layout_partitions
    from solver.run.next_step import round_builds
    from solver.run.options import RunOptions
    from solver.run.pipeline import Run
    from solver.run.steps import Step

    from .naive import bfs_distances

    shape = Shape.devquiz(3, 4, [0, 2, 9])
    dist = bfs_distances(shape)
    far = max(dist, key=lambda c: dist[c])
    recs = read_lines([Board(shape, far).to_devquiz()], "b.txt").records
    opts = RunOptions(db_dir=tmp_path / "db", memory_limit=1 << 20, layout_memory=8 << 10, workers=1)
    state = Run(recs, RunFiles(tmp_path / "a.txt"), opts).state()

    def planned(limit, over=True):
        step = Step("round", recs, limit, number=3, limit=limit, over=[recs[0].index] if over else [])
        return [q.name for p in round_builds(state, step, {}) for q in p.partitions]

    even = [p.name for p in layout_partitions(shape, 64 << 10, 1 + 3)]  # (--layout-partitions 1, round 3)
    assert len(even) == 4 and {n.split(".")[0] for n in even} == {"4-4"}
    assert planned(100.0) == even + ["5-3"]
    assert planned(0.02) == even  # at BUILD_RATE the even cuts take 0.016 s, with 5-3 0.027 s
    assert planned(100.0, over=False) == even


def test_the_last_round_spends_what_the_budget_has_left_on_the_boards_that_waited():
    """A round starts the boards whose forecast proof fits its limit, cheapest first, and
    whose limit grows by a quarter at least; a board whose forecast is over it waits for a
    later round.  In the last round (what the budget has left, no later round) the boards
    that waited start after the others, cheapest forecast first."""
    from types import SimpleNamespace as Rec

    def tried(index, limit):
        return Outcome(index, "b", "solved", None, length=80, lower_bound=76, time_limit=limit)

    final = {1: tried(1, 10.0), 2: tried(2, 10.0), 3: tried(3, 160.0), 4: tried(4, 40.0), 5: tried(5, 10.0)}
    forecast = {1: 30.0, 2: 900.0, 3: 100.0, 4: 5000.0, 5: 20.0}
    unproven = [Rec(index=i) for i in final]
    order = [r.index for r in round_boards(unproven, final, forecast, 180.0, last=False)]
    assert order == [5, 1]  # 2 and 4 wait for a longer limit; 3 had 160 s (180 is not a quarter more)
    order = [r.index for r in round_boards(unproven, final, forecast, 180.0, last=True)]
    assert order == [5, 1, 2, 4]  # the last round: those that waited too, cheapest forecast first
    assert [r.index for r in round_boards(unproven, final, forecast, 45.0, last=True)] == [5, 1, 2]
    # the last round's boards can start: the latest start of a board given its limit is
    # seconds after the limit is set, not the moment itself (which started none)
    now, deadline = 1000.0, 1000.0 + 600.0
    assert round_limit(10.0, 3, deadline, 1.5, now) == (80.0, False)
    limit, last = round_limit(10.0, 6, deadline, 1.5, now)
    assert last and limit < 640.0 and deadline - tuning().reserve - 1.5 * limit >= now + 10.0
    # a short budget keeps back less: a 60 s budget 6 s, not 30 (its last round 3 s to start)
    assert reserve_for(60.0) == 6.0 and reserve_for(20.0) == RESERVE_MIN and reserve_for(3600.0) == tuning().reserve
    now, deadline = 1000.0, 1040.0
    limit, last = round_limit(5.0, 3, deadline, 1.5, now, reserve_for(60.0))  # 40 s would not fit
    assert last and limit == (40.0 - 6.0 - 3.0) / 1.5


def test_the_last_rounds_boards_each_get_what_is_left_as_they_start():
    """The last round's limit is decided as each board starts: what the budget has left
    over the span a board may last, so a board that ends early hands its slot to the
    next with what is left, not to nothing (a fixed limit let none start after the first
    seconds of the round); each board's limit is recorded."""
    from types import SimpleNamespace as Rec

    from solver.run.planning import UntilEnd

    clock = FakeClock(1000.0)
    limit = UntilEnd(1300.0, 1.5).start()
    assert limit(Rec(index=7), clock.now()) == 200.0
    clock.advance(150.0)  # the first board ended after 150 s: the next gets the 150 s left over 1.5
    assert limit(Rec(index=8), clock.now()) == 100.0
    clock.advance(250.0)  # past the end: a token limit, never a negative one
    assert limit(Rec(index=9), clock.now()) == 0.01 and limit.given == {7: 200.0, 8: 100.0, 9: 0.01}


def test_the_timeline_never_counts_a_board_down_for_a_later_try_that_found_less(devquiz_slice, tmp_path):
    from solver.run.timeline import timeline_rows

    rec = read_file(str(devquiz_slice)).records[0]
    files = RunFiles(tmp_path / "a.txt")
    board, t = str(rec.board), time.time()
    tries = [
        {"index": rec.index, "board": board, "status": "solved", "optimal": True, "ended": t},
        {"index": rec.index, "board": board, "status": "limit", "optimal": False, "ended": t + 1},
    ]
    files.journal.write_text("".join(json.dumps(d) + "\n" for d in tries))
    rows = timeline_rows([rec], files)
    assert [(r["proven"], r["answered"]) for r in rows] == [(1, 1), (1, 1)]


@pytest.mark.slow
def test_a_board_no_pass_started_is_still_counted_unanswered(devquiz_slice, tmp_path):
    """A budget too short for a pass to reach a board still accounts for it (report,
    summary, exit code): its quick pass's outcome when the full pass never started it,
    else ``limit`` with no answer and the reason; no board drops out of the count."""
    recs = read_file(str(devquiz_slice)).records
    kw = dict(db_dir=tmp_path / "db", memory_limit=8 << 20, layout_memory=8 << 20, workers=1, node_limit=300)
    kw.update(answers_first=False)  # (the answer pass answers every board of the slice: tests/test_answers_first.py)
    none = run_pipeline(recs, tmp_path / "a.txt", budget=1, quick_node_limit=1, **kw)
    assert sorted(none.outcomes) == sorted(r.index for r in recs)
    assert {(o.status, o.error) for o in none.outcomes.values()} == {("limit", NOT_STARTED)}
    assert all(o.size == r.board.shape.size_text for r, o in zip(recs, none.outcomes.values()))
    assert (tmp_path / "a.txt").read_text() == "\n" * len(recs)
    # the quick pass tries the boards (one node each); the full pass's last start (the
    # reserve, 5 s of a 17 s budget, and 3.2 limits of 5 s before the budget's end) has
    # passed when it begins
    t0 = time.time()
    quick = run_pipeline(recs, tmp_path / "b.txt", budget=17, quick_limit=1.0, quick_node_limit=1, **kw)
    assert time.time() - t0 < 17 * 1.5  # the budget kept, within a bound that holds on a busy machine
    assert sorted(quick.outcomes) == sorted(r.index for r in recs)
    assert not quick.full.outcomes and all(o.status == "limit" for o in quick.outcomes.values())
    tried = [o for o in quick.outcomes.values() if o.error != NOT_STARTED]
    assert tried and all(o is quick.quick.outcomes[o.index] for o in tried)


@pytest.mark.slow
def test_a_spent_budget_plans_no_builds(devquiz_slice, tmp_path, monkeypatch):
    """Where the time left is shorter than a build's start, no pass plans a build
    (planning a file's layouts takes seconds of a budget that is over)."""
    from solver.run import next_step

    def planned(*args, **kwargs):
        raise AssertionError("a build planned with no time left")

    for name in ("plan_first", "plan_layouts", "plan_wall_free_cuts"):
        monkeypatch.setattr(next_step, name, planned)
    recs = read_file(str(devquiz_slice)).records
    kw = dict(db_dir=tmp_path / "db", memory_limit=8 << 20, layout_memory=8 << 20, workers=1, node_limit=300)
    res = run_pipeline(recs, tmp_path / "a.txt", budget=1, quick_node_limit=1, answers_first=False, **kw)
    assert sorted(res.outcomes) == sorted(r.index for r in recs)
    assert not (tmp_path / "db").exists() or not any((tmp_path / "db").iterdir())


def test_an_automatic_budget_is_marked_by_the_sitting_that_ends_the_full_pass(tmp_path):
    """``--budget auto``: the running time at the end of the full pass is kept for the
    sittings to come once the pass ends; one interrupted leaves it to the sitting that
    ends it (a resumed sitting's rounds get twice the passes' whole time, not twice
    the interrupted part)."""
    from solver.run.options import RunOptions
    from solver.run.pipeline import Run
    from solver.run.steps import BatchResult, Step

    clock = FakeClock(1000.0)
    opts = RunOptions(db_dir=tmp_path / "db", budget="auto", clock=clock)
    run = Run([], RunFiles(tmp_path / "a.txt"), opts)
    full = Step("full", [], 10.0)
    clock.advance(30.0)
    run.record(full, BatchResult({}, interrupted=True))
    assert "passes" not in run.sittings.marks
    clock.advance(20.0)
    run.record(full, BatchResult({}))
    assert run.sittings.marks["passes"] == 50.0
