"""The run's one clock (solver/run/clock.py): the budget's arithmetic checked exactly on a
clock the test moves, to the millisecond, with no process racing the machine's clock."""

import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from pdb_builder.board import Shape
from pdb_builder.cores import BuildStopped
from solver.run.builds import BEHIND, LATE, Builds
from solver.run.clock import FakeClock
from solver.run.feed import Feed, Job
from solver.run.files import RunFiles
from solver.run.options import RunResult
from solver.run.planning import MIN_TIME_LIMIT, full_pass_limit, round_limit
from solver.run.plans import Plan
from solver.run.sittings import Sittings

RUN = Path(__file__).resolve().parents[1] / "solver" / "run"


def test_the_run_reads_the_time_only_through_its_clock():
    reads = re.compile(r"\btime\.(time|monotonic|perf_counter|sleep)\(")
    found = [
        f"{path.name}:{k}"
        for path in sorted(RUN.glob("*.py"))
        if path.name != "clock.py"
        for k, line in enumerate(path.read_text().splitlines(), 1)
        if reads.search(line)
    ]
    assert found == []


class _Sittings:
    def touch(self, force=False):
        pass


def _late_or_stopped(clock, after: float):
    """A build forecast at 10 s, stopped ``after`` seconds past its start: how it ended."""
    res = RunResult()
    builds = Builds(res, None, None, _Sittings(), None, clock=clock)
    builds.forecast = lambda entries: entries / 1e6  # 10 M entries: 10 s
    plan = Plan(Shape.devquiz(3, 3), "layout", 1, 10_000_000, [SimpleNamespace(name="8")])
    job = Job(lambda: None, (), [])
    assert builds.begin(plan, job)
    assert job.give_up_at == plan.give_up_at == clock.now() + BEHIND * 10.0
    clock.advance(after)
    builds.done(plan, None, BuildStopped())
    (failed,) = res.failed_builds
    return failed, res.build_seconds


def test_a_build_behind_its_forecast_is_given_up_at_the_right_moment():
    clock = FakeClock()
    failed, seconds = _late_or_stopped(clock, BEHIND * 10.0 - 0.001)
    assert failed.how == "stopped" and seconds == pytest.approx(BEHIND * 10.0 - 0.001, abs=1e-6)  # not late yet
    failed, seconds = _late_or_stopped(clock, BEHIND * 10.0)
    assert failed.how == "late" and failed.reason == f"{LATE}: 20 s, forecast 10 s"


def test_a_feed_gives_up_a_running_job_once_its_time_has_come():
    clock = FakeClock()
    recs = [SimpleNamespace(index=i) for i in range(3)]
    job = Job(lambda: None, (), recs, give_up_at=clock.now() + 5.0)
    feed = Feed(recs, [job], clock=clock)
    assert feed.take()[0] == [job]
    clock.advance(5.0)
    assert feed.give_up(2, [job]) == []  # at its time: not past it
    clock.advance(0.001)
    assert feed.give_up(2, [job]) == [job] and feed.give_up(2, [job]) == []  # once
    assert sorted(r.index for r in feed.take()[0]) == [0, 1, 2]  # its boards wait no more


def test_sittings_on_a_clock_count_the_budget_across_a_kill(tmp_path):
    clock = FakeClock(5000.0)
    path = RunFiles(tmp_path / "a.txt").sittings
    first = Sittings.begin(path, resume=False, clock=clock)
    deadline = first.deadline(600.0)
    assert deadline == 5600.0
    clock.advance(100.0)
    first.touch(force=True)  # the last moment it was seen working, then killed
    clock.advance(1000.0)  # down for 1000 s: not counted
    second = Sittings.begin(path, resume=True, clock=clock)
    assert second.spent_before == 100.0 and second.deadline(600.0) == 6100.0 + 500.0
    clock.advance(20.0)
    assert second.running(clock.now()) == 120.0


def test_budget_arithmetic_on_a_clock():
    """The full pass's limit and a round's limit, planned at a moment the clock gives."""
    clock = FakeClock(1000.0)
    todo = list(range(50))
    # 630 s left less a 30 s reserve, 2 slots, no builds: half of 1200 slot-seconds over 50 boards
    assert full_pass_limit(clock.now() + 630.0, todo, 2, clock.now(), reserve=30.0) == 12.0
    clock.advance(300.0)  # later: less is left, a shorter limit
    assert full_pass_limit(1630.0, todo, 2, clock.now(), reserve=30.0) == 6.0
    clock.advance(150.0)  # later still: never under MIN_TIME_LIMIT
    assert full_pass_limit(1630.0, todo, 2, clock.now(), reserve=30.0) == MIN_TIME_LIMIT
    limit, last = round_limit(5.0, 1, 1630.0, 1.5, 1300.0, 30.0)
    assert (limit, last) == (10.0, False)  # 2 x 5 s fits the 285 s left after the start window, over 1.5
    limit, last = round_limit(5.0, 6, 1630.0, 1.5, 1300.0, 30.0)
    assert (limit, last) == (190.0, True)  # 2^6 x 5 s does not: the last round, what is left
