"""``slidepdb run --budget``: every board answered before builds and proofs; builds
sized to the time left and given up when they fall behind; the answered count never
falls as the budget grows; a busy machine costs proofs, not answers."""

import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from pdb_builder.board import Shape
from pdb_builder.formats import read_file
from pdb_builder.moves import check_moves
from solver.cli import main
from solver.outcome import Outcome
from solver.run.answer_pass import AnswerLimit, machine_share, plans_within, shrunk_plans
from solver.run.builds import BEHIND, LATE
from solver.run.clock import SYSTEM, FakeClock
from solver.run.feed import Feed, Job
from solver.run.pipeline import run_pipeline
from solver.run.plans import Plan

from .conftest import data_file, slow_build, walk_cells


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    """A small DevQuiz file: the first two boards of each of 3x3, 4x4 (walled and not),
    and the first three 5x5 and walled 6x6 boards, which a second of search on no
    tables answers but seldom proves."""
    lines = data_file("devquiz2011", "problems.txt").read_text().split("\n")
    per, picked = {}, []
    want = {("3", "3", False): 2, ("4", "4", False): 2, ("4", "4", True): 2, ("5", "5", False): 3, ("6", "6", True): 3}
    for line in lines[2:]:
        if not line:
            continue
        w, h, cells = line.split(",")
        key = (w, h, "=" in cells)
        if per.get(key, 0) < want.get(key, 0):
            per[key] = per.get(key, 0) + 1
            picked.append(line)
    f = tmp_path_factory.mktemp("mixed") / "mixed.txt"
    f.write_text("\n".join([lines[0], str(len(picked)), *picked]) + "\n")
    return f


def answered(path, recs) -> int:
    """Lines of an answer file whose moves reach their board's goal (each simulated)."""
    lines = path.read_text().split("\n")[: len(recs)]
    return sum(1 for r, m in zip(recs, lines) if m and check_moves(r.board, m).ok)


@pytest.mark.slow
def test_a_budget_too_short_for_any_build_answers_every_board(mixed, tmp_path, tune):
    """At a build rate so slow that no build fits, a 1-minute budget (the least that
    promises every answer, a cold start's compiling included) still answers every board
    of a mixed file (most proven by the answer pass), builds nothing, exits 0.  The
    kernels are compiled first: a cold start on a machine that runs two suites at once
    took most of the minute (its own test is below)."""
    from solver.run.warm import cold_parts, warm_up

    warm_up(0, 1, cold_parts())

    tune(build_rate=1.0)  # entries a thread-second: nothing fits
    recs = read_file(str(mixed)).records
    out, db = tmp_path / "a.txt", tmp_path / "db"
    t0 = time.time()
    r = CliRunner().invoke(
        main, ["run", str(mixed), "--out", str(out), "--db-dir", str(db), "--budget", "1m", "--workers", "2"]
    )
    assert r.exit_code == 0, r.output
    assert time.time() - t0 < 60 * 1.5  # the budget kept, within a bound that holds on a busy machine
    assert answered(out, recs) == len(recs)
    assert not list(db.glob("*.h5")) and "answer pass" in r.output


@pytest.mark.slow
def test_a_build_slower_than_its_forecast_is_given_up_early(mixed, tmp_path, monkeypatch, tune):
    """A build that never ends (forecast: about a second at a high build rate) is given
    up at BEHIND times its forecast, long before the budget's end, named as given up,
    and its boards are answered from the tables there are."""
    import solver.run.builds as builds

    monkeypatch.setattr(builds, "build_pdb", slow_build)  # the forked workers see it too
    tune(build_rate=30e6)
    recs = [r for r in read_file(str(mixed)).records if r.board.shape.size_text in ("5x5", "6x6")]
    kw = dict(db_dir=tmp_path / "db", memory_limit=512 << 20, workers=2, budget=30)
    res = run_pipeline(recs, tmp_path / "a.txt", **kw)
    late = [f.reason for f in res.failed_builds if f.how == "late"]
    assert late and all(text.startswith(LATE) for text in late), res.failed_builds
    for text in late:
        ran, forecast = (float(x.split()[0]) for x in text[len(LATE) + 2 :].split(", forecast "))
        assert ran <= BEHIND * forecast + 3 and ran < 15, text
    # the others: stopped as the boards waiting on them went on, or at the budget's end
    assert all(f.how == "stopped" for f in res.failed_builds if f.how != "late")
    assert all(o.status == "solved" for o in res.outcomes.values())
    assert answered(tmp_path / "a.txt", recs) == len(recs)


@pytest.mark.slow
def test_the_answered_count_never_falls_as_the_budget_grows(mixed, tmp_path):
    recs = read_file(str(mixed)).records
    counts = []
    for budget in (8, 16, 32):
        out = tmp_path / f"{budget}.txt"
        run_pipeline(recs, out, db_dir=tmp_path / f"db{budget}", memory_limit=512 << 20, workers=2, budget=budget)
        counts.append(answered(out, recs))
    assert counts == sorted(counts) and counts[-1] == len(recs), counts


@pytest.mark.slow
def test_a_busy_neighbour_costs_proofs_not_answers(mixed, tmp_path):
    """A second program spinning on a core beside the run: the budget is kept and every
    board answered."""
    recs = read_file(str(mixed)).records
    spin = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        t0 = time.time()
        res = run_pipeline(
            recs, tmp_path / "a.txt", db_dir=tmp_path / "db", memory_limit=512 << 20, workers=2, budget=30
        )
        took = time.time() - t0
    finally:
        spin.kill()
    assert took < 30 * 1.5, took  # the budget kept, within a bound that holds on a busy machine
    assert answered(tmp_path / "a.txt", recs) == len(recs)
    assert res.answer is not None and res.answer[1] == len(recs)


@pytest.mark.slow
@pytest.mark.parametrize(
    "limits", [["--budget", "none", "--quick-limit", "0.5", "--time-limit", "2"], ["--budget", "10s"]]
)
def test_a_size_no_table_can_serve_is_answered_and_the_run_goes_on(tmp_path, limits):
    """A 7x7 board (49 free cells: more than any table serves) that no short search
    proves, beside a 3x3 one: the run answers both, exit 0, and without a budget says why
    its size gets no table (a 10 s budget leaves no time for a build after its answer
    pass, so nothing is planned there: the planning used to end the run with the
    answers unwritten)."""
    f = tmp_path / "big.txt"
    f.write_text(" ".join(map(str, walk_cells(Shape.korf(7, 7), 300, 1))) + "\n3,3,123456708\n")
    out = tmp_path / "a.txt"
    r = CliRunner().invoke(
        main, ["run", str(f), "--out", str(out), "--db-dir", str(tmp_path / "db"), "--workers", "1", *limits]
    )
    assert r.exit_code == 0, r.output
    if "none" in limits:
        assert "7x7 boards go on without tables: 7x7 has 49 free cells" in r.output
    recs = read_file(str(f)).records
    assert answered(out, recs) == 2
    assert not list((tmp_path / "db").glob("7x7*"))


def test_a_board_proven_by_its_answer_and_the_quick_pass_bound_goes_no_further(tmp_path):
    """The answer pass answered a board (20 moves, bound 18) and the quick pass's search,
    stopped at its limit, proved the bound 20: the board is proven, so it is final (the
    full pass used to take such boards again and build their layouts' tables: 427
    builds of 643 on the whole DevQuiz file).  A bound short of the answer leaves the
    board to the later passes."""
    from solver.run.files import RunFiles
    from solver.run.options import RunOptions
    from solver.run.pipeline import Run

    f = tmp_path / "b.txt"
    f.write_text("3,3,123456708\n3,3,123456780\n")
    recs = read_file(str(f)).records
    told = []  # what the run reports as each outcome stands
    run = Run(recs, RunFiles(tmp_path / "a.txt"), RunOptions(db_dir=tmp_path / "db", on_outcome=told.append))
    for i, bound in ((1, 20), (2, 19)):
        board = recs[i - 1].text
        run.seen(Outcome(index=i, board=board, status="solved", moves="R" * 20, length=20, lower_bound=18, h0=16))
        run.quick_seen(Outcome(index=i, board=board, status="limit", lower_bound=bound, h0=16))
        told.append(None)
    assert run.final[1].proven and run.final[1].length == 20 and told[1] is run.final[1]
    assert 2 not in run.final and not run.best[2].proven and run.best[2].lower_bound == 19
    assert told[4:] == [None]  # (board 2's search told nothing new)


# -- the parts, without processes -----------------------------------------------------------


class _Rec:
    def __init__(self, index):
        self.index = index


def test_an_answer_limit_shares_what_is_left_among_the_boards_not_started():
    """Ten boards, 2 slots, 32 s: 32 * 2 / (10 * 3.2) = 2 s each, capped at ``high``;
    boards that ended early leave more to the later ones; never past the hard end."""
    clock = FakeClock(1000.0)
    now = clock.now()
    lim = AnswerLimit(now + 32, 10, 2, low=0.05, high=1.5, hard_end=now + 100).start()
    assert lim(_Rec(0), clock.now()) == 1.5
    lim = AnswerLimit(now + 16, 10, 2, low=0.05, high=5, hard_end=now + 100).start()
    assert lim(_Rec(0), clock.now()) == 1.0  # 16 * 2 / (10 * 3.2)
    lim.left = 1  # the others ended at once: the last board gets the rest
    clock.advance(1.0)  # a second later: 15 s left for it, 5 at most
    assert lim(_Rec(1), clock.now()) == 5 and lim.given == {0: 1.0, 1: 5}
    short = AnswerLimit(now + 16, 1, 2, low=1.0, high=5, hard_end=clock.now() + 0.32).start()
    assert short(_Rec(0), clock.now()) == pytest.approx(0.1)  # a board started now ends by the hard end: 0.32 / 3.2


def test_the_machine_share_is_the_median_core_share_of_the_boards():
    def o(share, seconds=1.0):
        return Outcome(0, "", "solved", None, cpu_share=share, seconds=seconds)

    assert machine_share([o(0.6), o(0.7), o(0.65)]) == 0.65
    assert machine_share([o(0.5), o(0.5)]) == 1.0  # too few to tell
    assert machine_share([o(0.5, 0.001)] * 5) == 1.0  # too short to tell


def test_shrunk_plans_halve_the_largest_patterns_until_they_fit():
    """A plan of 4 entries a byte of memory and one of 2, 400 entries in all: the larger
    halved first (its boards re-planned), then the larger of the two again, and so on;
    a plan that cannot shrink (the floor) is left out."""
    made = []

    def plan_of(recs, memory):
        made.append((tuple(recs), memory))
        return [Plan(SimpleNamespace(key=f"s{k}"), "wall-free", 1, k * memory, records=[k]) for k in recs]

    out = shrunk_plans(plan_of([4, 2], 1024), plan_of, 400, 1024, 16)
    assert sorted(p.entries for p in out) == [128, 256] and sum(p.entries for p in out) <= 400
    assert made[1] == ((4,), 512)  # the largest first
    assert shrunk_plans(plan_of([4, 2], 1024), plan_of, 400, 1024, 512) == []  # floor 512: none fits
    assert [p.entries for p in plans_within([Plan(None, "layout", 1, n) for n in (300, 200, 100)], 400)] == [300, 100]


def test_a_feed_gives_up_a_job_past_its_give_up_time_once():
    recs = [_Rec(0), _Rec(1)]
    job = Job(print, (), [recs[0]])
    feed = Feed(recs, [job], clock=SYSTEM)
    items, _ = feed.take()
    assert job in items and recs[0] not in items
    assert feed.give_up(2, [job]) == []  # no give-up time: never late
    job.give_up_at = time.time() - 1
    assert feed.give_up(2, [job]) == [job]
    assert feed.give_up(2, [job]) == []  # once
    items, _ = feed.take()
    assert recs[0] in items  # its record goes on without it


def test_the_timeline_counts_a_board_proven_by_one_try_s_answer_and_another_s_bound(tmp_path):
    """The answer pass answers a board in 50 moves (bound 40); the quick pass proves the
    bound 50 without an answer: the board stands proven from then on, as the report says."""
    import json

    from solver.run.files import RunFiles
    from solver.run.timeline import timeline_rows

    rec = read_file(str(data_file("devquiz2011", "problems.txt"))).records[0]
    files, board, t = RunFiles(tmp_path / "a.txt"), str(rec.board), time.time()
    answer = {"index": rec.index, "board": board, "status": "solved", "length": 50, "lower_bound": 40, "ended": t}
    quick = {"index": rec.index, "board": board, "status": "limit", "length": None, "lower_bound": 50, "ended": t + 1}
    files.journal.write_text(
        json.dumps({**answer, "step": "answer 1"}) + "\n" + json.dumps({**quick, "step": "quick"}) + "\n"
    )
    rows = timeline_rows([rec], files)
    assert [(r["step"], r["answered"], r["proven"]) for r in rows] == [("answer 1", 1, 0), ("quick", 1, 1)]


def test_a_shorter_search_beats_a_long_answer_and_never_the_optimum():
    """``fallback=SHORTER`` on the first wall-free 3x4 and 4x3 DevQuiz boards of 25
    moves or more (optimal lengths by bidirectional BFS), each known answer 12 moves
    over the optimum: answers shorter than the known one that simulate to the goal and
    are no shorter than the optimum; told the optimum itself, nothing shorter (a
    limit that says so, or the proof)."""
    from solver.api import SolverPool, solve_record
    from solver.fallback import SHORTER
    from solver.outcome import Known

    from .conftest import truth

    recs = read_file(str(data_file("devquiz2011", "problems.txt"))).records
    recs = [r for r in recs if r.board.shape.size_text in ("3x4", "4x3") and not r.board.shape.walls][:12]
    pool = SolverPool(use_db=False)
    shortened = 0
    for rec in recs:
        best = truth(rec)
        if best < 25:
            continue
        o = solve_record(rec, pool, None, 10_000, SHORTER, known=Known(0, best + 12))
        if o.status == "solved":
            assert check_moves(rec.board, o.moves).ok
            assert best <= o.length < best + 12
            shortened += "weighted IDA*" in (o.fallback or "")
        else:
            assert o.status == "limit" and "no answer shorter than" in o.error
        o = solve_record(rec, pool, None, 10_000, SHORTER, known=Known(0, best))
        assert o.status == "limit" and "no answer shorter than" in o.error or o.optimal
    assert shortened >= 4


def test_the_answers_longest_over_their_bounds_are_shortened_until_they_would_fit():
    """``to_shorten`` takes the unproven answers longest over their lower bounds until
    their excess covers twice the moves over the limits; ``over_limits`` adds up the
    directions over."""
    from solver.run.answer_pass import over_limits, to_shorten

    def out(i, moves, bound, optimal=False):
        return Outcome(i, "", "solved", moves=moves, length=len(moves), lower_bound=bound, optimal=optimal)

    outs = {1: out(1, "L" * 10, 2), 2: out(2, "R" * 6, 4), 3: out(3, "U" * 30, 0, True), 4: out(4, "D" * 9, 3)}
    assert over_limits(outs.values(), (100, 100, 100, 100)) == 0
    assert over_limits(outs.values(), (5, 5, 100, 5)) == 5 + 1 + 4
    assert over_limits(outs.values(), None) == 0
    assert to_shorten(outs, 4) == [1]  # 8 over its bound covers 2 x 4
    assert to_shorten(outs, 5) == [1, 4]  # the proven board never
    assert to_shorten(outs, 5, tried={1}) == [4, 2]


@pytest.mark.slow
def test_a_run_over_the_move_limits_shortens_answers_before_it_builds(mixed, tmp_path):
    """Move limits far below what any answers take: the answer pass searches the
    unproven boards again for shorter answers; what it journals again for a board is
    never longer than the board's first answer (the better of the two is kept), and
    always simulates to the goal.  (How many it shortens depends on the machine's speed
    under a real budget: counted, not asserted.)"""
    import json

    from solver.run.files import RunFiles
    from solver.run.journal import pass_of

    recs = read_file(str(mixed)).records
    out = tmp_path / "a.txt"
    res = run_pipeline(
        recs, out, db_dir=tmp_path / "db", memory_limit=512 << 20, workers=2, budget=30, limits=(1, 1, 1, 1)
    )
    tries = {}
    for line in RunFiles(out).journal.read_text().splitlines():
        d = json.loads(line)
        if "index" in d and pass_of(d["step"]) == "answer":  # (the first line names the input)
            tries.setdefault(d["index"], []).append(d)
    board = {r.index: r.board for r in recs}
    again = 0
    for i, (first, *later) in tries.items():
        if first["status"] != "solved" or first["optimal"]:
            continue
        for d in later:
            assert d["status"] == "solved" and d["length"] <= first["length"]
            assert check_moves(board[i], d["moves"]).ok
        again += bool(later)
        assert res.outcomes[i].length <= min(d["length"] for d in [first, *later])
    assert again, tries  # the shortening steps ran


def test_a_walled_board_no_table_served_goes_to_its_layout_next_time():
    """``known_for_retry``: a later answer step starts from the board's lower bound; a
    walled board that no table served and the fallback left unanswered is marked
    ``ring`` (its next fallback goes straight to its layout's tables), with the widths
    that failed there; no other board."""
    from solver.run.answer_pass import known_for_retry

    def out(status, walls, tables, bound=30, **more):
        return Outcome(0, "", status, walls=walls, tables=tables, lower_bound=bound, **more)

    assert known_for_retry(out("limit", 4, {})) == (30, None, (0, ()))
    assert known_for_retry(out("limit", 4, {}, ladder_failed=[3 << 20, [1024, 4096]])).ring == (3 << 20, (1024, 4096))
    assert known_for_retry(out("limit", 0, {})).ring is None
    assert known_for_retry(out("limit", 4, {"6x6 layout": [1]})).ring is None
    assert known_for_retry(out("error", 4, {}, bound=None)) is None
    assert known_for_retry(None) is None


def test_a_cold_start_compiles_each_missing_kernel_once_a_share_a_worker(monkeypatch):
    """On a cold numba cache the workers compile the parts it lacks before any board
    (their boards' limits are not spent compiling), worker i of n parts i, i + n, ...;
    a part the cache holds is not compiled again, nor the fallback's in a batch without it."""
    from solver.run import warm

    calls = []
    parts = tuple((lambda k=k: calls.append(k), Path(f"m{k}.py"), f"k{k}", k == 2) for k in range(5))
    monkeypatch.setattr(warm, "cache_is_cold", lambda module, kernel: kernel != "k1")
    assert warm.cold_parts(fallback=False, parts=parts) == [0, 3, 4]
    cold = warm.cold_parts(parts=parts)
    assert cold == [0, 2, 3, 4]
    warm.warm_up(0, 2, cold, parts)
    assert calls == [0, 3]
    warm.warm_up(1, 2, cold, parts)
    assert calls == [0, 3, 2, 4]


def test_each_warm_up_part_names_a_kernel_of_its_module():
    """Every part of :data:`solver.run.warm.PARTS` names a module that has the kernel
    whose cache entry says it is compiled (else a cold start would never look warm), and
    runs (once compiled, in well under a second)."""
    from solver.run import warm

    for part, module, kernel, _ in warm.PARTS:
        assert f"def {kernel}(" in module.read_text()
        part()


def test_a_later_answer_step_takes_what_is_left_when_that_is_more_than_the_boards_had():
    """``step_least``: a step whose boards fit gets their limit; a later step where the
    budget has less left than that gets what is left, if more than the step before gave
    them (1/ANSWER_GROWTH of their limit); else no step; the first step never shrinks."""
    from solver.run.answer_pass import ANSWER_GROWTH, step_least
    from solver.run.steps import BOARD_SPAN

    assert step_least(3.2, 100.0, 2) == 3.2
    assert step_least(12.8, BOARD_SPAN * 4.0, 4) == pytest.approx(4.0)  # more than the 3.2 s they had
    assert step_least(12.8, BOARD_SPAN * 12.8 / ANSWER_GROWTH * 0.9, 4) is None  # less than they had
    assert step_least(0.05, BOARD_SPAN * 0.04, 0) is None
