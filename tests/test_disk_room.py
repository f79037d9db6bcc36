"""``slidepdb run --disk-limit``: room made under the limit by removing the run's own
tables whose boards are all proven, never anyone else's, and never for nothing."""

from pathlib import Path
from types import SimpleNamespace

import pytest

from pdb_builder.formats import read_file
from pdb_builder.moves import check_moves
from solver.run.builds import Builds, disk_used
from solver.run.clock import SYSTEM
from solver.run.files import RunFiles
from solver.run.options import RunResult
from solver.run.pipeline import run_pipeline
from solver.run.plans import Plan


class _Sittings:
    def touch(self, force=False):
        pass


def _table(folder: Path, name: str, size: int) -> Path:
    path = folder / name
    path.write_bytes(b"\0" * size)
    return path


def _builds(tmp_path, limit, spent_keys):
    db = tmp_path / "db"
    db.mkdir()
    ledger = tmp_path / "a.txt.built"
    res = RunResult()
    b = Builds(res, db, limit, _Sittings(), None, ledger, lambda key: key in spent_keys)
    return b, db, ledger, res


def _plan(entries: int) -> Plan:
    from pdb_builder.board import Shape

    return Plan(Shape.devquiz(3, 3), "wall-free", 1, entries, [SimpleNamespace(name="8")])


def test_room_comes_from_the_runs_own_spent_tables_only(tmp_path):
    b, db, ledger, res = _builds(tmp_path, 1000, {"3x3-devquiz-w1", "3x3-devquiz-w2", "3x3-devquiz-w8"})
    mine_spent = _table(db, "3x3-devquiz-w1.pdb.8.h5", 300)
    mine_spent_small = _table(db, "3x3-devquiz-w2.pdb.8.h5", 100)
    mine_wanted = _table(db, "3x3-devquiz-w4.pdb.8.h5", 300)
    theirs = _table(db, "3x3-devquiz-w8.pdb.8.h5", 300)  # spent too, but the run did not build it
    ledger.write_text("3x3-devquiz-w1.pdb.8.h5\n3x3-devquiz-w2.pdb.8.h5\n3x3-devquiz-w4.pdb.8.h5\nhalf-writ")
    b.used = disk_used(db)
    assert b.begin(_plan(250))  # 1000 held: the largest spent one of the run's own makes room
    assert not mine_spent.exists() and mine_spent_small.exists() and mine_wanted.exists() and theirs.exists()
    assert res.removed_tables == [(mine_spent.name, 300)] and b.used == 950 and not res.skipped_builds
    assert not b.begin(_plan(400))  # removing the 100 bytes left would not make room: nothing removed
    assert mine_spent_small.exists() and res.skipped_builds and len(res.removed_tables) == 1


def test_no_ledger_removes_nothing(tmp_path):
    b, db, ledger, res = _builds(tmp_path, 500, {"3x3-devquiz-w1"})
    table = _table(db, "3x3-devquiz-w1.pdb.8.h5", 500)
    b.used = disk_used(db)
    assert not b.begin(_plan(10)) and table.exists() and not res.removed_tables


def _walled(devquiz_slice):
    recs = read_file(str(devquiz_slice)).records
    return [r for r in recs if r.board.shape.walls and r.board.shape.size_text != "3x3"]


@pytest.mark.slow  # two whole runs with every layout built: 40 s
def test_a_run_under_a_tight_disk_limit_removes_its_proven_boards_tables_and_builds_the_rest(devquiz_slice, tmp_path):
    """Walled 3x4 and 4x3 boards, each its layout's table (the quick pass held to one node,
    so that every board goes on to its layout): with room for the wall-free tables and
    one and a half of the largest layout's, every layout is built all the same (one the
    quick pass had no room for, by the full pass), each proven board's table making
    room for the next, and every board is proven."""
    recs = _walled(devquiz_slice)
    kw = dict(workers=1, budget=None, quick_node_limit=1, wall_free_count=0)
    free = run_pipeline(recs, tmp_path / "a.txt", db_dir=tmp_path / "a", disk_limit=None, **kw)
    sizes = {Path(b.path).name: Path(b.path).stat().st_size for b in free.builds}
    layouts = {n: s for n, s in sizes.items() if "-w" in n}
    assert len(layouts) >= 3 and all(o.proven for o in free.outcomes.values())
    limit = sum(sizes.values()) - sum(layouts.values()) + 3 * max(layouts.values()) // 2
    out = tmp_path / "b.txt"
    res = run_pipeline(recs, out, db_dir=tmp_path / "b", disk_limit=limit, **kw)
    assert {Path(b.path).name for b in res.builds} == set(sizes)
    assert res.removed_tables and disk_used(tmp_path / "b") <= limit
    assert {line.split()[0] for line in RunFiles(out).built.read_text().splitlines()} == set(sizes)
    for r in recs:
        o = res.outcomes[r.index]
        assert o.proven and o.length == free.outcomes[r.index].length and check_moves(r.board, o.moves).ok
    removed = {name for name, _ in res.removed_tables}
    assert removed <= set(layouts) and not any((tmp_path / "b" / n).exists() for n in removed)


def test_a_run_never_removes_tables_it_did_not_build(devquiz_slice, tmp_path):
    """The same boards in a folder whose tables an earlier run built: a second run, held
    to a limit that only removing them would meet, removes none and proves its boards
    with what is there."""
    recs = _walled(devquiz_slice)
    kw = dict(workers=1, budget=None, quick_node_limit=1, wall_free_count=0)
    db = tmp_path / "db"
    run_pipeline(recs[:1], tmp_path / "a.txt", db_dir=db, disk_limit=None, **kw)
    before = {p.name: p.stat().st_mtime_ns for p in db.glob("*.h5")}
    res = run_pipeline(recs, tmp_path / "b.txt", db_dir=db, disk_limit=disk_used(db), **kw)
    assert not res.removed_tables and res.skipped_builds
    assert {p.name: p.stat().st_mtime_ns for p in db.glob("*.h5")} == before
    assert all(check_moves(r.board, res.outcomes[r.index].moves).ok for r in recs)


def test_a_cache_lets_go_of_a_removed_file_as_the_next_one_opens(tmp_path):
    """A worker's open tables hold their files' space: one whose file was removed is
    dropped when the cache opens the next, the others kept."""
    from pdb_builder import build
    from pdb_builder.db_cache import DatabaseCache

    db = tmp_path / "db"
    paths = build("3x3", goal="devquiz", db_dir=db, partition=["4-4", "8"])
    cache = DatabaseCache()
    for p in paths:
        cache.get(p)
    paths[0].unlink()
    cache.get(paths[1])  # held already: nothing opens, nothing is dropped
    assert len(cache._open) == 2
    build("3x3", goal="devquiz", db_dir=db, partition="5-3")
    cache.get(db / "3x3-devquiz.pdb.5-3.h5")
    assert sorted(Path(k[0]).name for k in cache._open) == ["3x3-devquiz.pdb.5-3.h5", "3x3-devquiz.pdb.8.h5"]


def test_a_build_waits_for_room_its_runs_own_unsettled_tables_will_make(tmp_path):
    """Over the limit, with the room held by the run's own tables whose boards are still
    being searched: the build says not yet while its job may wait, is skipped when it may
    not, and starts, removing them, once their boards are settled; one that even all the
    run's own tables would not make room for is skipped at once."""
    from solver.run.feed import Job

    spent: set = set()
    b, db, ledger, res = _builds(tmp_path, 1000, spent)
    _table(db, "3x3-devquiz-w1.pdb.8.h5", 600)
    ledger.write_text("3x3-devquiz-w1.pdb.8.h5\n")
    b.used = disk_used(db)
    job = Job(print, (), [], can_wait=True)
    assert b.begin(_plan(500), job) is None and not res.skipped_builds  # w1's boards still searched
    assert b.begin(_plan(2000), job) is False and len(res.skipped_builds) == 1  # never fits
    job.can_wait = False
    assert b.begin(_plan(500), job) is False and len(res.skipped_builds) == 2
    spent.add("3x3-devquiz-w1")
    job.can_wait = True
    assert b.begin(_plan(500), job) is True and res.removed_tables == [("3x3-devquiz-w1.pdb.8.h5", 600)]


def test_a_feed_asks_a_waiting_job_again_and_never_waits_with_nothing_running():
    """A job whose ``begin`` says not yet stays in the feed while a record runs (it is
    not counted ready), is asked again as the next slot is given, and is told it may
    not wait once nothing runs: then it is skipped and its record goes on."""
    from solver.run.feed import Feed, Job

    a, b = SimpleNamespace(index=1), SimpleNamespace(index=2)
    asked = []
    job = Job(print, (), [b])
    job.begin = lambda: asked.append(job.can_wait) or None
    feed = Feed([a, b], [job], clock=SYSTEM)
    items, ended = feed.take()
    assert items == [a] and not ended and asked == [True] and feed.ready(4) == 0
    feed.ended(0.1)
    items, ended = feed.take()
    assert items == [b] and asked == [True, False] and ended  # nothing left to hand out
