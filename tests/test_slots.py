"""The workers' slots that a batch's boards and builds share: boards waiting on their
builds, a build stopped at the last start, the idle slots given to the builds and then
to the boards (and taken back first for boards that are ready), a dask worker's own
lanes, jobs abandoned past the last start, and the feed's order."""

import os
from pathlib import Path

import pytest

from pdb_builder.cores import usable_cores
from pdb_builder.formats import read_file
from pdb_builder.moves import check_moves
from solver.run.batch import run_batch
from solver.run.clock import SYSTEM, FakeClock
from solver.run.feed import Feed, Job

from .conftest import data_file


def _where(path, fail=False, *, threads):
    """A job (picklable: module level): says which process ran it and on what threads."""
    if fail:
        raise OSError(28, "No space left on device")
    Path(path).write_text(f"{os.getpid()} {type(threads).__name__} {threads.granted}")
    return os.getpid()


@pytest.mark.parametrize("workers", [1, 2])
def test_boards_wait_for_their_jobs(problems, tmp_path, workers):
    recs = read_file(str(problems)).records
    events = []

    def job(name, waiting, fail=False):
        return Job(
            _where,
            (tmp_path / name, fail),
            waiting,
            begin=lambda: events.append(("begin", name)) or True,
            done=lambda value, error: events.append(("done", name, value, error)),
        )

    jobs = [job("a", recs[2:4]), job("b", recs[3:5], fail=True)]
    res = run_batch(
        recs, db_dir=tmp_path / "none", jobs=jobs, on_outcome=lambda o: events.append(o.index), workers=workers
    )
    assert len(res.outcomes) == 8
    assert sorted(i for i in events if isinstance(i, int)) == sorted(r.index for r in recs)
    ends = {e[1]: k for k, e in enumerate(events) if isinstance(e, tuple) and e[0] == "done"}
    # each board solved after every job it waits on ended, a failed job's too
    assert all(events.index(r.index) > ends["a"] for r in recs[2:4])
    assert all(events.index(r.index) > ends["b"] for r in recs[3:5])
    (_, _, value, error), (_, _, none, failure) = sorted(e for e in events if isinstance(e, tuple) and e[0] == "done")
    assert error is None and none is None and "No space left" in str(failure)
    pid, threads, granted = (tmp_path / "a").read_text().split()
    if workers == 1:  # alone: in this process, every core, through a grant the feed can withdraw
        assert int(pid) == value == os.getpid() and threads == "Share" and int(granted) == usable_cores()
    else:  # a worker's slot, on the threads its lane grants
        assert int(pid) == value != os.getpid() and threads == "Share"


def test_one_worker_stops_a_build_at_the_last_start(problems, tmp_path):
    """With one worker a build runs in this process: past the feed's last start (the
    budget's) it is told to stop and the batch ends, where before it ran to its end
    (a 40 s budget on the DevQuiz file's first boards ran for as long as the 5x6 build
    took).  The feed reads a clock that moves 50 ms at each reading: its last start
    comes after 40 readings, however fast the machine is."""
    from solver.run.drive import Pools
    from solver.run.slots import local_outcomes

    from .test_dask import _STOPPED, _build_until_stopped

    _STOPPED.clear()
    recs = read_file(str(problems)).records[:3]
    ended = []
    job = Job(_build_until_stopped, (60,), recs[:1], done=lambda value, error: ended.append(error))
    clock = FakeClock(step=0.05)
    feed = Feed(recs, [job], last_start=clock.now() + 2, clock=clock)
    out = list(local_outcomes(feed, Pools(tmp_path / "none"), 5.0, None, True, workers=1))
    assert _STOPPED.is_set() and out == []
    assert len(ended) == 1 and "time budget ran out" in str(ended[0])


def test_a_jobs_threads_follow_the_idle_slots():
    """Four slots, two jobs, three boards waiting on the first.  While nothing else can
    start, the idle slots go to the jobs (one each); when the first job ends and its
    three boards are ready, the second job's grant comes down from 2 to 1 so that all
    three run (its threads say they stopped), and it grows to every slot once the boards
    are done."""
    import threading
    import time
    from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
    from types import SimpleNamespace

    from pdb_builder.cores import Share
    from solver.run.drive import drive
    from solver.run.lanes import Lanes

    recs = [SimpleNamespace(index=i) for i in range(3)]
    first_may_end = threading.Event()
    grants, running, busy = [], [], []  # the second job's grants as they changed; boards running as each began

    def first(*, threads):
        first_may_end.wait(30)

    def second(*, threads):
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < 30:
            g = threads.granted
            threads.report(g)  # its threads follow the grant at once
            if not grants or grants[-1] != g:
                grants.append(g)
            if g == 2:
                first_may_end.set()
            if g == 4 and 1 in grants:
                return
            time.sleep(0.002)

    def board(rec):
        busy.append(rec.index)
        running.append(len(busy))
        time.sleep(0.3)
        busy.remove(rec.index)
        return rec.index

    lanes, pool = Lanes(4), ThreadPoolExecutor(6)

    def run_job(job, lane):
        return pool.submit(job.fn, threads=Share(grant=lanes.cells[lane, 0:1], used=lanes.cells[lane, 1:2]))

    feed = Feed(recs, [Job(first, (), recs), Job(second, (), [])], clock=SYSTEM)
    done = list(
        drive(
            feed,
            lambda rec, lane: pool.submit(board, rec),
            run_job,
            lambda pending: wait(pending, timeout=0.05, return_when=FIRST_COMPLETED).done,
            lambda pending: None,
            slots=4,
            lanes=lanes,
        )
    )
    pool.shutdown()
    assert sorted(done) == [0, 1, 2] and max(running) == 3  # the three boards ran side by side
    assert grants[:3] == [1, 2, 1] and grants[-1] == 4


def test_idle_slots_go_to_the_jobs_first_then_to_the_boards_and_the_boards_give_them_back_first():
    """Nothing ready: the spare slots go to the running builds (the boards waiting on
    them start sooner), to the running boards when no build runs, the fewest-threaded
    first.  Items ready: the boards' extra threads are taken back before the builds'."""
    from types import SimpleNamespace

    from solver.run.lanes import Lanes

    lanes = Lanes(6)
    a, b, job = SimpleNamespace(index=0), SimpleNamespace(index=1), Job(lambda *, threads: None, (), [])
    la, lj = lanes.open(a, job=False), lanes.open(job, job=True)
    lanes.share(spare=2, ready=0)
    assert (lanes.cells[la, 0], lanes.cells[lj, 0]) == (1, 3)
    lanes.share(spare=0, ready=1)  # a board is ready: the build gives a thread back, the board has none to give
    assert (lanes.cells[la, 0], lanes.cells[lj, 0]) == (1, 2)
    lanes.close(job)
    lb = lanes.open(b, job=False)
    lanes.share(spare=3, ready=0)
    assert sorted([lanes.cells[la, 0], lanes.cells[lb, 0]]) == [2, 3]
    lj = lanes.open(job, job=True)
    lanes.share(spare=1, ready=0)
    assert lanes.cells[lj, 0] == 2
    lanes.share(spare=0, ready=3)  # three ready, none spare: the boards' extra threads first
    assert (lanes.cells[la, 0], lanes.cells[lb, 0], lanes.cells[lj, 0]) == (1, 1, 2)
    assert lanes.taken() == 4


def test_a_board_whose_search_ended_holds_one_slot_whatever_its_grant():
    """A board that goes on to its fallback (one thread) releases its grant: it counts
    one slot, and the spare ones go to the others, not to it."""
    from types import SimpleNamespace

    from pdb_builder.cores import RELEASED
    from solver.run.lanes import Lanes

    lanes = Lanes(3)
    a, b = SimpleNamespace(index=0), SimpleNamespace(index=1)
    la, lb = lanes.open(a, job=False), lanes.open(b, job=False)
    lanes.share(spare=4, ready=0)
    assert (lanes.cells[la, 0], lanes.cells[lb, 0]) == (3, 3) and lanes.taken() == 6
    lanes.cells[la, 1] = RELEASED  # a's search ended: Share.release
    assert lanes.taken() == 4
    lanes.share(spare=2, ready=0)
    assert (lanes.cells[la, 0], lanes.cells[lb, 0]) == (3, 5)
    lanes.share(spare=0, ready=2)  # ready items: the slots come from the boards still searching
    assert (lanes.cells[la, 0], lanes.cells[lb, 0]) == (3, 3) and lanes.taken() == 4


def test_a_dask_workers_lanes_keep_its_threads_without_a_parent():
    """A dask worker's tasks (no parent knows what waits): a build alone is granted every
    thread; a board that starts takes one back, a board of a fixed count its count (the
    boards' extra threads first); threads still running above a lowered grant are not
    handed out again until they have stopped (the watcher then does); a released board
    counts one; every end gives its threads back."""
    import time

    from solver.run.cluster import WorkerLanes

    def until(cond):
        end = time.time() + 5
        while not cond() and time.time() < end:
            time.sleep(0.01)
        return cond()

    w = WorkerLanes(4)
    build = w.enter("build", job=True)
    assert build.granted == 4
    build.report(4)
    board = w.enter("board", job=False)
    assert (build.granted, board.granted) == (3, 1)
    w.enter("fixed", job=False, fixed=2)
    assert (build.granted, board.granted) == (1, 1) and w.lanes.held() == 4
    w.leave("fixed")
    assert build.granted == 1  # its four threads have not stopped yet: the two slots are not free
    build.report(1)
    assert until(lambda: build.granted == 3)  # the watcher saw them stop
    w.leave("build")
    assert board.granted == 4
    other = w.enter("other", job=False)
    assert (board.granted, other.granted) == (3, 1)
    board.release()  # its search ended: its fallback runs on one thread
    assert until(lambda: other.granted == 3)
    assert w.stop("other") is True and w.stop("gone") is False and other.stopped
    w.leave("board")
    w.leave("other")
    assert w.lanes.held() == 0 and until(lambda: w._watcher is None)


def test_a_board_releases_its_threads_before_its_fallback(monkeypatch):
    """The optimal search stopped by its limit on two granted threads: the fallback's
    one thread finds the grant released, and the answer is still valid."""
    import numpy as np

    from pdb_builder.cores import RELEASED, Share
    from solver.api import SolverPool, solve_record
    from solver.fallback import ladder

    rec = read_file(str(data_file("korf100.txt"))).records[0]
    share = Share(grant=np.array([2], dtype=np.int64), used=np.array([0], dtype=np.int64))
    seen, search = [], ladder.fallback_search

    def watched(*args, **kwargs):
        seen.append(int(share.used[0]))
        return search(*args, **kwargs)

    monkeypatch.setattr(ladder, "fallback_search", watched)
    out = solve_record(rec, SolverPool(use_db=False), node_limit=20_000, threads=share)
    assert seen == [RELEASED] and out.fallback and not out.optimal
    assert check_moves(rec.board, out.moves).ok


def test_a_board_alone_in_a_batch_searches_on_the_slots_the_others_left(tmp_path):
    """Two workers, two boards: once the near one is answered, the far one's search
    goes on two threads (its outcome says so), and its answer is the published one."""
    f = tmp_path / "two.txt"
    rows = data_file("korf100.txt").read_text().splitlines()
    f.write_text("101 1 1 0 2 3 4 5 6 7 8 9 10 11 12 13 14 15\n" + rows[4] + "\n")
    recs = read_file(str(f)).records
    res = run_batch(recs, use_db=False, workers=2, time_limit=60, fallback=False)
    near, far = (res.outcomes[r.index] for r in recs)
    assert near.length == 1 and near.threads is None
    assert far.optimal and far.length == recs[1].expected_length
    assert far.threads == 2
    fixed = run_batch(recs, use_db=False, workers=2, time_limit=60, fallback=False, grow=False)  # solve --threads 1
    assert fixed.outcomes[recs[1].index].optimal and fixed.outcomes[recs[1].index].threads is None


def test_jobs_still_running_past_the_last_start_are_abandoned():
    """A job that never ends (a dask task cannot be told to stop): once the feed has
    ended past its last start and no board runs, the drive cancels it and says so (the
    feed's clock moves 10 ms at each reading)."""
    import threading
    from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
    from types import SimpleNamespace

    from solver.run.drive import drive
    from solver.run.feed import Abandoned

    rec, forever, ended = SimpleNamespace(index=0), threading.Event(), []
    job = Job(lambda *, threads: forever.wait(30), (), [rec], done=lambda value, error: ended.append(error))
    clock = FakeClock(step=0.01)
    feed = Feed([rec], [job], last_start=clock.now() + 0.3, clock=clock)
    cancelled = []
    pool = ThreadPoolExecutor(2)
    stopped = drive(
        feed,
        lambda r, lane: pool.submit(lambda: r.index),
        lambda j, lane: pool.submit(j.fn, threads=1),
        lambda pending: wait(pending, timeout=0.05, return_when=FIRST_COMPLETED).done,
        lambda pending: cancelled.extend(pending),
        slots=2,
    )
    assert _drained(stopped) == ([], True)
    forever.set()
    pool.shutdown()
    assert len(cancelled) == 1 and len(ended) == 1 and isinstance(ended[0], Abandoned)


def _drained(gen):
    """The items a generator yields and the value it returns."""
    out = []
    try:
        while True:
            out.append(next(gen))
    except StopIteration as stop:
        return out, stop.value


def test_feed_hands_out_jobs_before_the_boards_that_wait_on_them():
    from types import SimpleNamespace

    recs = [SimpleNamespace(index=i) for i in range(5)]
    begun = []
    big = Job(print, (), [recs[1]], memory=8, begin=lambda: begun.append("big") or True)
    small = Job(print, (), [recs[3]], memory=4, begin=lambda: begun.append("small") or True)
    skipped = Job(print, (), [recs[4]], begin=lambda: False)  # e.g. over the disk limit: its board goes on at once
    feed = Feed(recs, [big, small, skipped], memory_cap=10, clock=SYSTEM)
    # big goes where record 1 stands; small would take the jobs past the cap: record 2 goes instead
    assert feed.take(limit=3) == ([recs[0], big, recs[2]], False)
    assert feed.take() == ([recs[4]], False) and begun == ["big"]  # small waits, the skipped one's board goes
    feed.job_done(big, lambda: None)
    assert feed.take(limit=1) == ([recs[1]], False)  # released: before small, as in todo
    assert feed.take() == ([small], False)
    assert feed.take() == ([], False)  # record 3 waits on small
    feed.job_done(small, lambda: None)
    assert feed.take() == ([recs[3]], True)
