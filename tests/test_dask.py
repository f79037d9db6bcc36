"""``slidepdb run`` and ``solve`` on a dask cluster: the same answers, the builds as
tasks, each worker's threads shared out, builds stopped or placed within the workers'
memory limits, an unreachable scheduler in one line."""

import gc
import threading
import time

import pytest
from click.testing import CliRunner

from pdb_builder.formats import read_file
from pdb_builder.moves import check_moves
from solver.cli import main
from solver.run.batch import run_batch
from solver.run.clock import SYSTEM
from solver.run.pipeline import run_pipeline

from .conftest import data_file, truth


@pytest.mark.parametrize("workers, threads", [(1, 1), (2, 1), (1, 2)])
def test_dask_local_cluster_same_answers(devquiz_slice, tmp_path, workers, threads):
    """Each dask thread keeps its own searchers; the kernel runs without the GIL, so a
    worker's threads search at once."""
    distributed = pytest.importorskip("distributed")
    recs = read_file(str(devquiz_slice)).records[:6]
    local = run_batch(recs, db_dir=tmp_path / "none", workers=1).outcomes
    cluster_args = dict(n_workers=workers, threads_per_worker=threads, processes=False, dashboard_address=None)
    with (
        distributed.LocalCluster(**cluster_args) as cluster,
        distributed.Client(cluster) as client,
    ):
        remote = run_batch(recs, db_dir=tmp_path / "none", scheduler=client, out_path=tmp_path / "a.txt").outcomes
    assert {i: o.length for i, o in remote.items()} == {i: o.length for i, o in local.items()}
    assert all(check_moves(r.board, m).ok for r, m in zip(recs, (tmp_path / "a.txt").read_text().split("\n")))


@pytest.mark.slow
def test_dask_cluster_runs_the_builds_too(devquiz_slice, tmp_path, monkeypatch):
    """``run --scheduler``: the builds are tasks on the cluster, on the threads their
    worker's lanes grant (one each on workers of one thread), and a budget's full-pass
    limit is planned for the cluster's threads."""
    distributed = pytest.importorskip("distributed")
    import solver.run.builds as builds
    import solver.run.next_step as next_step

    recs = [r for r in read_file(str(devquiz_slice)).records if r.board.shape.size_text == "3x3"]
    real, threads = builds.build_pdb, []

    def noted(shape, part, db_dir, **kw):
        threads.append((threading.current_thread().name, kw["threads"].granted))
        return real(shape, part, db_dir, **kw)

    monkeypatch.setattr(builds, "build_pdb", noted)
    planned = []
    monkeypatch.setattr(
        next_step, "full_pass_limit", lambda d, todo, slots, now, building=0.0, **kw: planned.append(slots) or 30.0
    )
    cluster_args = dict(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None)
    with distributed.LocalCluster(**cluster_args) as cluster, distributed.Client(cluster) as client:
        res = run_pipeline(
            recs,
            tmp_path / "a.txt",
            db_dir=tmp_path / "db",
            memory_limit=8 << 20,
            layout_memory=8 << 20,
            quick_node_limit=1,
            scheduler=client,
            budget=600,
            answers_first=False,  # (the answer pass proves every 3x3 board: nothing would be built)
        )
    assert planned == [2] and res.full_limit == 30.0
    assert len(threads) == len(res.builds) >= 2 and not res.failed_builds
    assert all(name != threading.main_thread().name and n == 1 for name, n in threads)
    assert all(res.outcomes[r.index].length == truth(r) for r in recs)


_HELD = threading.Event()  # set: the held jobs below end


def _held_build(seconds, *, threads):
    """A build job that never looks at its grant (it cannot be told to stop): it holds its
    thread until ``_HELD`` is set or ``seconds`` pass."""
    _HELD.wait(seconds)


@pytest.mark.slow
def test_dask_builds_never_hold_every_thread_and_the_feed_keeps_its_last_start(devquiz_slice, tmp_path):
    """On a dask cluster, two long builds that never stop (they ignore their grant) and come
    first in the feed's order must not take both of a 2-thread cluster's threads while
    the boards that need no build wait behind them in the cluster's queue, past the
    feed's last start (before, every item went to the cluster at once: the boards
    started when the builds ended)."""
    distributed = pytest.importorskip("distributed")
    from solver.run.cluster import dask_outcomes
    from solver.run.drive import Pools
    from solver.run.feed import Feed, Job

    recs = [r for r in read_file(str(devquiz_slice)).records if r.board.shape.size_text == "3x3"][:6]
    assert len(recs) == 6
    jobs = [Job(_held_build, (60,), [recs[0]]), Job(_held_build, (60,), [recs[1]])]  # each before its board
    _HELD.clear()
    cluster_args = dict(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None)
    try:
        with distributed.LocalCluster(**cluster_args) as cluster, distributed.Client(cluster) as client:
            t0 = time.time()
            feed = Feed(recs, jobs, last_start=t0 + 20, board_seconds=5.0, clock=SYSTEM)
            seen = {}
            for out in dask_outcomes(feed, Pools(tmp_path / "none"), 5.0, None, True, client):
                seen.setdefault(out.index, time.time() - t0)
            free = [r for r in recs[2:]]  # the boards that wait on no build
            assert all(r.index in seen and seen[r.index] < 15 for r in free), seen
            assert time.time() - t0 < 40  # the feed ended at its last start, the held build cancelled
            _HELD.set()
    finally:
        _HELD.set()


_GRANTS: list = []  # the grants _granted_build was given, as they changed
_STOPPED = threading.Event()  # set: _build_until_stopped was told to stop


def _granted_build(seconds, *, threads):
    """A build job that notes each grant its lane gives it, until it has been granted two
    threads or ``seconds`` pass."""
    end = time.time() + seconds
    while time.time() < end:
        g = threads.granted
        threads.report(g)  # its threads follow the grant at once
        if not _GRANTS or _GRANTS[-1] != g:
            _GRANTS.append(g)
        if g == 2:
            return
        time.sleep(0.005)


def _build_until_stopped(seconds, *, threads):
    """A build job that runs until its grant tells it to stop, or ``seconds`` pass."""
    from pdb_builder.cores import BuildStopped

    end = time.time() + seconds
    while time.time() < end:
        if threads.stopped:
            _STOPPED.set()
            raise BuildStopped
        time.sleep(0.01)


def test_a_dask_build_takes_its_workers_idle_threads(devquiz_slice, tmp_path):
    """On one worker of two threads, a build that a board waits on is granted one thread
    while another board runs beside it and both once it runs alone (the cluster's
    thread beside it would otherwise idle while the board waits)."""
    distributed = pytest.importorskip("distributed")
    from solver.run.cluster import dask_outcomes
    from solver.run.drive import Pools
    from solver.run.feed import Feed, Job

    recs = [r for r in read_file(str(devquiz_slice)).records if r.board.shape.size_text == "3x3"][:2]
    _GRANTS.clear()
    feed = Feed(recs, [Job(_granted_build, (30,), [recs[0]])], clock=SYSTEM)
    cluster_args = dict(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None)
    with distributed.LocalCluster(**cluster_args) as cluster, distributed.Client(cluster) as client:
        t0 = time.time()
        out = {o.index: o for o in dask_outcomes(feed, Pools(tmp_path / "none"), 5.0, None, True, client)}
    assert _GRANTS[-1] == 2 and time.time() - t0 < 25, _GRANTS
    assert sorted(out) == [r.index for r in recs] and all(out[r.index].length == truth(r) for r in recs)


def test_a_dask_build_nothing_waits_on_is_stopped(devquiz_slice, tmp_path):
    """A build still running on the cluster when the feed ends (past its last start) is
    told to stop and ends at its next chunk; before, it held its thread to the end."""
    distributed = pytest.importorskip("distributed")
    from solver.run.cluster import dask_outcomes
    from solver.run.drive import Pools
    from solver.run.feed import Feed, Job

    recs = [r for r in read_file(str(devquiz_slice)).records if r.board.shape.size_text == "3x3"][:3]
    _STOPPED.clear()
    cluster_args = dict(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None)
    with distributed.LocalCluster(**cluster_args) as cluster, distributed.Client(cluster) as client:
        t0 = time.time()
        # the board waiting on it has an answer (patient): it waits for the build, which the
        # other boards' times alone would otherwise give up before the last start
        job = Job(_build_until_stopped, (60,), [recs[0]])
        feed = Feed(recs, [job], last_start=t0 + 3, patient=[recs[0].index], clock=SYSTEM)
        out = {o.index: o for o in dask_outcomes(feed, Pools(tmp_path / "none"), 5.0, None, True, client)}
        assert _STOPPED.wait(10) and time.time() - t0 < 20
    assert sorted(out) == [r.index for r in recs[1:]]  # the board that waited on it never started


_PLACED: list = []  # (worker address, start, end, memory) of each _placed_build run


def _placed_build(seconds, memory, *, threads):
    """A build job that notes where and when it ran."""
    from distributed import get_worker

    t0 = time.time()
    time.sleep(seconds)
    _PLACED.append((get_worker().address, t0, time.time(), memory))


def test_dask_builds_go_where_a_workers_memory_limit_leaves_room(devquiz_slice, tmp_path, caplog):
    """Two workers, one with a memory limit too small for any build: every build runs on
    the other, never two at once where their BFS arrays would pass half its limit; a build
    that fits no worker runs alone, on the largest, and the run says so (before, the
    cluster placed builds by its threads alone: two on one worker, or one on the small)."""
    distributed = pytest.importorskip("distributed")
    import dask

    from solver.run.cluster import dask_outcomes
    from solver.run.drive import Pools
    from solver.run.feed import Feed, Job

    recs = [r for r in read_file(str(devquiz_slice)).records if r.board.shape.size_text == "3x3"][:6]
    gb = 10**9
    sizes = [1.5 * gb, 1.5 * gb, 1.5 * gb, 3 * gb]  # the largest worker leaves 2 GB to builds
    jobs = [Job(_placed_build, (1.0, m), [r], memory=int(m)) for m, r in zip(sizes, recs)]
    _PLACED.clear()

    def worker(limit):
        return {"cls": distributed.Worker, "options": {"nthreads": 2, "memory_limit": limit}}

    scheduler = {"cls": distributed.Scheduler, "options": {"dashboard_address": None}}
    # (the limits are only numbers here: no pausing the test's own process)
    off = {f"distributed.worker.memory.{k}": False for k in ("target", "spill", "pause", "terminate")}
    with dask.config.set(off), caplog.at_level("WARNING", logger="slidepdb"):
        with (
            distributed.SpecCluster(
                workers={"big": worker(4 * gb), "small": worker(gb)}, scheduler=scheduler
            ) as cluster,
            distributed.Client(cluster) as client,
        ):
            big = next(a for a, w in client.scheduler_info()["workers"].items() if w["memory_limit"] == 4 * gb)
            feed = Feed(recs, jobs, clock=SYSTEM)
            out = {o.index: o for o in dask_outcomes(feed, Pools(tmp_path / "none"), 5.0, None, True, client)}
    assert sorted(out) == sorted(r.index for r in recs)
    assert len(_PLACED) == 4 and all(addr == big for addr, *_ in _PLACED), _PLACED
    runs = sorted(_PLACED, key=lambda p: p[1])
    assert all(a[2] <= b[1] for a, b in zip(runs, runs[1:])), runs  # one at a time
    assert any("a build needs 3.0 GB" in m for m in caplog.messages), caplog.messages


def test_a_dask_board_alone_searches_on_its_workers_idle_threads(tmp_path):
    """One worker of two threads, two boards: once the near one is answered, the far
    one's search goes on both threads (its outcome says so); with a fixed count
    (``solve --threads 1``) it stays on one."""
    distributed = pytest.importorskip("distributed")
    f = tmp_path / "two.txt"
    rows = data_file("korf100.txt").read_text().splitlines()
    f.write_text("101 1 1 0 2 3 4 5 6 7 8 9 10 11 12 13 14 15\n" + rows[4] + "\n")
    recs = read_file(str(f)).records
    cluster_args = dict(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None)
    with distributed.LocalCluster(**cluster_args) as cluster, distributed.Client(cluster) as client:
        res = run_batch(recs, use_db=False, scheduler=client, time_limit=60, fallback=False)
        fixed = run_batch(recs, use_db=False, scheduler=client, time_limit=60, fallback=False, grow=False)
    near, far = (res.outcomes[r.index] for r in recs)
    assert near.length == 1 and near.threads is None
    assert far.optimal and far.length == recs[1].expected_length
    assert far.threads == 2
    assert fixed.outcomes[recs[1].index].optimal and fixed.outcomes[recs[1].index].threads is None


def test_a_runs_last_boards_search_on_every_worker_of_the_cluster(tmp_path):
    """Two workers of one thread, two boards (no more boards left than workers): each
    splits its large iterations over both workers, so the far one searches on both
    (its outcome says 2) and proves the published length; with a fixed thread count a
    board it stays on its worker."""
    distributed = pytest.importorskip("distributed")
    f = tmp_path / "two.txt"
    f.write_text(
        "101 1 1 0 2 3 4 5 6 7 8 9 10 11 12 13 14 15\n" + data_file("korf100.txt").read_text().splitlines()[4] + "\n"
    )
    recs = read_file(str(f)).records
    cluster_args = dict(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None)
    with distributed.LocalCluster(**cluster_args) as cluster, distributed.Client(cluster) as client:
        split = run_batch(recs, use_db=False, scheduler=client, time_limit=60, fallback=False).outcomes
        fixed = run_batch(recs, use_db=False, scheduler=client, time_limit=60, fallback=False, grow=False).outcomes
    near, far = (split[r.index] for r in recs)
    assert near.length == 1 and near.threads is None
    assert far.optimal and far.length == recs[1].expected_length and far.threads == 2
    assert check_moves(recs[1].board, far.moves).ok
    alone = fixed[recs[1].index]
    assert alone.optimal and alone.length == far.length and alone.threads is None


def test_scheduler_unreachable_is_one_line(tmp_path, monkeypatch):
    pytest.importorskip("distributed")
    import dask

    with dask.config.set({"distributed.comm.timeouts.connect": "2s"}):  # dask's own setting, the one timeout
        r = CliRunner().invoke(
            main, ["solve", "3,3,123456708", "--scheduler", "tcp://127.0.0.1:1", "--db-dir", str(tmp_path)]
        )
    assert r.exit_code == 2 and "cannot connect" in r.output
    gc.collect()  # distributed's failed connection leaves an asyncio future that logs when collected
