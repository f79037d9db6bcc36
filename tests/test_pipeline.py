"""``slidepdb run``: a slice of the DevQuiz file end to end, resume after a kill,
the move budget, comparison with other answer files, and a Dask executor."""

import gc
import json
import os
import threading
import time

import pytest
from click.testing import CliRunner

from pdb_builder.errors import BoardError
from pdb_builder.formats import read_file
from pdb_builder.moves import check_moves
from solver.cli import main
from solver.outcome import Outcome
from solver.run.answers import compare, direction_counts, fit_limits, totals
from solver.run.batch import answers_of, run_batch
from solver.run.files import RunFiles
from solver.run.pipeline import run_pipeline
from solver.run.plan import (
    BUILD_RATE,
    NOT_STARTED,
    RESERVE,
    RESERVE_MIN,
    reserve_for,
    retry_order,
    round_boards,
    round_limit,
    worth_waiting_for,
)
from solver.run.timeline import Sittings

from .conftest import data_file
from .naive import distance

SMALL = {(3, 3), (3, 4), (4, 3)}


@pytest.fixture(scope="module")
def devquiz_slice(tmp_path_factory):
    """The first 3x3, 3x4 and 4x3 boards of the DevQuiz file, walled or not, in file order."""
    lines = data_file("devquiz2011", "problems.txt").read_text().split("\n")
    peer = data_file("devquiz2011", "peer_answers", "koron.txt").read_text().split("\n")
    picked, per, theirs = [], {}, []
    for k, line in enumerate(lines[2:]):
        if not line:
            continue
        w, h, cells = line.split(",")
        key = (int(w), int(h), "=" in cells)
        if (key[0], key[1]) in SMALL and per.get(key, 0) < 3:
            per[key] = per.get(key, 0) + 1
            picked.append(line)
            theirs.append(peer[k])
    d = tmp_path_factory.mktemp("slice")
    f = d / "slice.txt"
    f.write_text("\n".join([lines[0], str(len(picked))] + picked) + "\n")
    (d / "koron-slice.txt").write_text("\n".join(theirs) + "\n")
    return f


def _truth(rec):
    """Optimal length by an independent search: bidirectional BFS (tests/naive.py)."""
    return distance(rec.board.shape, rec.board.cells)


def test_devquiz_slice_end_to_end(devquiz_slice, tmp_path):
    recs = read_file(str(devquiz_slice)).records
    assert len(recs) >= 12 and any(r.board.shape.walls for r in recs)
    out, db = tmp_path / "a.txt", tmp_path / "db"
    built = []
    # one node in the quick pass: every board goes on to the layout builds and the full pass
    res = run_pipeline(
        recs,
        out,
        db_dir=db,
        limits=read_file(str(devquiz_slice)).limits,
        time_limit=30,
        memory_limit=8 << 20,
        layout_memory=8 << 20,
        quick_node_limit=1,
        workers=1,
        on_build=built.append,
    )
    roles = {p.role for p in built if hasattr(p, "role")}
    assert roles == {"wall-free", "layout"}
    layouts = {r.board.shape.key for r in recs if r.board.shape.walls}
    assert {p.shape.key for p in built if getattr(p, "role", "") == "layout"} == layouts
    assert not res.interrupted and len(res.outcomes) == len(recs) and not res.left_out
    answers = out.read_text().split("\n")[:-1]
    assert len(answers) == len(recs)
    for rec, moves in zip(recs, answers):
        o = res.outcomes[rec.index]
        assert check_moves(rec.board, moves).ok
        assert o.extra["optimal"] and len(moves) == _truth(rec), rec.board
        assert any(f"({rec.board.shape.key}.pdb" in name for name in o.extra["heuristic"])  # its own layout's
    assert RunFiles(out).quick_journal.exists()  # the per-board record stays; resuming a finished run solves nothing
    done = run_pipeline(
        recs,
        out,
        db_dir=db,
        limits=None,
        memory_limit=8 << 20,
        layout_memory=8 << 20,
        workers=1,
        resume=True,
        retry="unproven",
    )
    assert not done.builds and done.full.resumed == len(done.full.outcomes)
    assert answers_of(done.outcomes) == answers_of(res.outcomes)
    # a contestant's published answers (simulated by compare) are never shorter than a proven optimum
    c = compare(devquiz_slice.with_name("koron-slice.txt"), recs, dict(zip([r.index for r in recs], answers)))
    assert c.theirs_answered == len(recs) and c.theirs_invalid == 0 and c.shorter + c.equal == len(recs)
    # a second run builds nothing and proves every board in the quick pass
    again = run_pipeline(
        recs, tmp_path / "b.txt", db_dir=db, limits=None, memory_limit=8 << 20, layout_memory=8 << 20, workers=1
    )
    assert all(b.status == "skipped" for b in again.builds) and not again.full.outcomes
    assert (tmp_path / "b.txt").read_text() == out.read_text()


def test_a_size_of_walled_boards_waits_on_its_layouts_not_a_wall_free_stand_in(devquiz_slice, tmp_path):
    """Where every board of a size is walled, the quick pass builds their exact layouts'
    databases when they hold no more entries than the wall-free one would, and proves
    the boards on them; where they would hold more, the wall-free database as before."""
    from pdb_builder.patterns import num_placements
    from solver.run.builds import plan_first

    recs = [
        r for r in read_file(str(devquiz_slice)).records if r.board.shape.size_text == "3x3" and r.board.shape.walls
    ]
    assert len(recs) >= 2 and len({r.board.shape.key for r in recs}) == len(recs)
    # 3x3 wall-free at 8M: one 8-tile pattern, 9!/1! entries; each layout (7 tiles on 8 cells) 8!/1!
    layouts = sum(num_placements(len(r.board.shape.free_cells), len(r.board.shape.tiles)) for r in recs)
    assert layouts < num_placements(9, 8)
    assert {p.role for p in plan_first(recs, tmp_path / "db", 8 << 20, 8 << 20)} == {"layout"}
    # with layouts of 64K patterns, the size's wall-free cut of those sizes comes with them (6,048 entries)
    small = plan_first(recs, tmp_path / "db", 8 << 20, 64 << 10)
    assert [(p.role, p.entries, len(p.records)) for p in small if p.role == "wall-free"] == [
        ("wall-free", 6048, len(recs))
    ]
    assert sum(p.role == "layout" for p in small) == len(recs)
    # at 64K the wall-free table is two 4-tile patterns (6,048 entries): cheaper than the layouts
    assert [p.role for p in plan_first(recs, tmp_path / "db", 64 << 10, 8 << 20)] == ["wall-free"]
    built = []
    res = run_pipeline(recs, tmp_path / "a.txt", db_dir=tmp_path / "db", memory_limit=8 << 20, on_build=built.append)
    assert {p.role for p in built if hasattr(p, "role")} == {"layout"}
    assert not res.full.outcomes and len(res.quick.outcomes) == len(recs)
    for rec, moves in zip(recs, (tmp_path / "a.txt").read_text().split("\n")):
        assert res.outcomes[rec.index].extra["optimal"] and len(moves) == _truth(rec)


def test_run_resumes_after_a_kill(devquiz_slice, tmp_path):
    recs = read_file(str(devquiz_slice)).records
    out, db = tmp_path / "a.txt", tmp_path / "db"
    seen = []

    def kill_after_four(o):
        seen.append(o.index)
        if len(seen) == 4:
            raise KeyboardInterrupt

    kw = dict(db_dir=db, memory_limit=8 << 20, layout_memory=8 << 20, workers=1, quick_node_limit=1)
    first = run_pipeline(recs, out, on_outcome=kill_after_four, **kw)
    assert first.interrupted
    started = Sittings.read(RunFiles(out).sittings).spans[0][0]
    assert _timeline(out)[-1]["proven"] == "4"  # the timeline of what the journals hold so far
    lines = out.read_text().split("\n")[:-1]
    assert len(lines) == len(recs) and sum(1 for x in lines if x) == 4  # finished answers kept
    with pytest.raises(BoardError, match="--resume"):
        run_pipeline(recs, out, **kw)
    second = run_pipeline(recs, out, resume=True, **kw)
    assert not second.interrupted and len(second.outcomes) == len(recs)
    assert second.full.resumed == 4  # nothing solved twice
    answers = out.read_text().split("\n")[:-1]
    assert answers[:0] == [] and all(check_moves(r.board, m).ok for r, m in zip(recs, answers))
    assert [len(m) for m in answers] == [second.outcomes[r.index].extra["length"] for r in recs]
    rows = _timeline(out)
    spans = Sittings.read(RunFiles(out).sittings).spans
    assert len(spans) == 2 and spans[0][0] == started  # the resumed run counts on from the first sitting's time
    assert [float(r["elapsed_s"]) for r in rows] == sorted(float(r["elapsed_s"]) for r in rows)
    final = second.outcomes.values()
    assert int(rows[-1]["proven"]) == sum(bool(o.extra.get("optimal")) for o in final)
    assert int(rows[-1]["answered"]) == sum(o.status == "solved" for o in final)
    for size in {r["size"] for r in rows}:
        last = [r for r in rows if r["size"] == size][-1]
        want = sum(bool(o.extra.get("optimal")) for o in final if o.extra.get("size") == size)
        assert int(last["size_proven"]) == want and int(last["size_boards"]) == sum(
            r.board.shape.size_text == size for r in recs
        )
    assert {r["step"] for r in rows} <= {"quick", "full"} and "full" in {r["step"] for r in rows}


def _timeline(out) -> list[dict]:
    import csv

    with open(RunFiles(out).timeline, newline="") as fh:
        return list(csv.DictReader(fh))


def test_a_failed_build_never_stops_the_run(devquiz_slice, tmp_path, monkeypatch):
    import solver.run.builds as builds
    import solver.run.pipeline as pipeline

    recs = read_file(str(devquiz_slice)).records
    real = builds.build_pdb
    failed = []

    def layouts_fail(shape, part, db_dir, **kw):
        if shape.walls:
            failed.append(shape.key)
            raise OSError(28, "No space left on device")
        return real(shape, part, db_dir, **kw)

    monkeypatch.setattr(builds, "build_pdb", layouts_fail)
    out = tmp_path / "a.txt"
    res = run_pipeline(
        recs,
        out,
        db_dir=tmp_path / "db",
        memory_limit=8 << 20,
        layout_memory=8 << 20,
        time_limit=30,
        workers=1,
        quick_node_limit=1,
    )
    assert failed and sorted(k for k, _, _ in res.failed_builds) == sorted(failed)
    assert all("No space left" in e for _, _, e in res.failed_builds)
    assert not res.interrupted and len(res.outcomes) == len(recs)
    for rec, moves in zip(recs, out.read_text().split("\n")):  # every board answered, layouts or not
        assert check_moves(rec.board, moves).ok
        assert not any(
            f"({rec.board.shape.key}.pdb" in n
            for n in res.outcomes[rec.index].extra["heuristic"]
            if rec.board.shape.walls
        )
    # the command's summary names each failed build (its quick pass held to one node, as above)
    monkeypatch.setattr(
        pipeline, "run_pipeline", lambda *a, _run=pipeline.run_pipeline, **kw: _run(*a, quick_node_limit=1, **kw)
    )
    r = CliRunner().invoke(
        main,
        [
            "run",
            str(devquiz_slice),
            "--out",
            str(tmp_path / "b.txt"),
            "--db-dir",
            str(tmp_path / "db"),
            "--workers",
            "1",
        ],
    )
    assert r.exit_code == 0, r.output
    assert r.output.count("build failed:") >= len(set(failed)) and "No space left" in r.output


def test_builds_share_the_workers_one_thread_each(devquiz_slice, tmp_path, monkeypatch):
    """With two workers every build is a job in a worker's slot on one thread (the
    forked workers see the patched build), the wall-free ones largest first, and the
    boards that wait on it are proven."""
    import solver.run.builds as builds

    recs = read_file(str(devquiz_slice)).records
    real, seen = builds.build_pdb, tmp_path / "seen.txt"

    def noted(shape, part, db_dir, **kw):
        with seen.open("a") as fh:
            fh.write(f"{os.getpid()} {type(kw['threads']).__name__} {shape.key}\n")
        return real(shape, part, db_dir, **kw)

    monkeypatch.setattr(builds, "build_pdb", noted)
    kw = dict(db_dir=tmp_path / "db", memory_limit=8 << 20, layout_memory=8 << 20, time_limit=30, quick_node_limit=1)
    begun = []  # the wall-free cuts of the full pass left out: one build a shape below
    res = run_pipeline(recs, tmp_path / "a.txt", workers=2, on_build=begun.append, wall_free_count=0, **kw)
    wall_free = [p.shape.size_text for p in begun if getattr(p, "role", "") == "wall-free"]
    assert wall_free == ["3x4", "4x3", "3x3"]  # the largest build first (3x4 and 4x3 alike: file order)
    rows = [line.split() for line in seen.read_text().splitlines()]
    sizes = {r.board.shape.wall_free().key for r in recs}
    layouts = {r.board.shape.key for r in recs if r.board.shape.walls}
    assert sorted(key for _, _, key in rows) == sorted(sizes | layouts)
    assert all(int(pid) != os.getpid() and threads == "Share" for pid, threads, _ in rows)
    assert len(res.builds) == len(rows) and not res.failed_builds
    for rec in recs:
        o = res.outcomes[rec.index]
        assert o.extra["optimal"] and o.extra["length"] == _truth(rec)
        if rec.board.shape.walls:  # proven on its own layout's table: solved after that build
            assert any(f"({rec.board.shape.key}.pdb" in name for name in o.extra["heuristic"])


def test_retry_unanswered_boards_worst_first(devquiz_slice, tmp_path):
    recs = read_file(str(devquiz_slice)).records
    out = tmp_path / "a.txt"
    kw = dict(db_dir=tmp_path / "db", build=False, workers=1)
    first = run_pipeline(recs, out, node_limit=1, fallback=False, **kw)
    assert all(o.status == "limit" for o in first.outcomes.values())
    # a retry killed after its first two boards: run again, it goes on with the others first
    cut = run_pipeline(recs[:2], out, resume=True, retry="unanswered", node_limit=1, fallback=False, **kw)
    assert all(o.status == "limit" for o in cut.outcomes.values())
    order = []
    again = run_pipeline(recs, out, resume=True, retry="unanswered", on_outcome=lambda o: order.append(o.index), **kw)
    assert again.full.resumed == 0 and order == [r.index for r in recs[2:] + recs[:2]]
    rows = _timeline(out)
    assert sum(r["step"] == "retry" for r in rows) == len(recs) + 2  # every board tried again, the first two twice
    assert rows[-1]["proven"] == str(len(recs))
    answers = out.read_text().split("\n")[:-1]
    assert all(again.outcomes[r.index].extra["optimal"] and check_moves(r.board, m).ok for r, m in zip(recs, answers))
    assert retry_order(None) < retry_order(again.outcomes[recs[0].index])  # unsolved boards go first
    with pytest.raises(ValueError, match="retry"):
        run_pipeline(recs, out, resume=True, retry="everything", **kw)


def test_retry_with_more_layout_partitions_builds_the_missing_ones(devquiz_slice, tmp_path):
    from pdb_builder.make.building import layout_partitions

    recs = [r for r in read_file(str(devquiz_slice)).records if r.board.shape.walls]
    out, db = tmp_path / "a.txt", tmp_path / "db"
    kw = dict(db_dir=db, memory_limit=8 << 20, layout_memory=8 << 20, workers=1, quick_node_limit=1)
    first = run_pipeline(recs, out, node_limit=1, fallback=False, **kw)
    assert all(o.status == "limit" for o in first.outcomes.values())
    built = []
    again = run_pipeline(recs, out, resume=True, retry="unanswered", layout_count=2, on_build=built.append, **kw)
    second = {s.key: layout_partitions(s, 8 << 20, 2)[1:] for s in (r.board.shape for r in recs)}
    assert any(second.values())  # some layout has a second cut
    assert sorted(b.name for b in built if hasattr(b, "status")) == sorted(p.name for v in second.values() for p in v)
    assert all(b.status == "built" for b in built if hasattr(b, "status"))
    for rec, moves in zip(recs, out.read_text().split("\n")):
        o = again.outcomes[rec.index]
        assert o.extra["optimal"] and check_moves(rec.board, moves).ok and len(moves) == _truth(rec)
        for part in second[rec.board.shape.key]:  # the solver reads both cuts
            assert any(f"pdb.{part.name}.h5" in name for name in o.extra["heuristic"])


def test_the_full_pass_builds_wall_free_cuts_for_the_sizes_of_its_walled_boards(devquiz_slice, tmp_path):
    """Beside each layout, the full pass builds the walled boards' sizes' wall-free
    cuts of the layout's pattern sizes (the quick pass built the first), and the boards
    are proven reading them; a size whose folder holds another wall-free table gets none."""
    from pdb_builder.make.building import layout_partitions
    from solver.run.builds import plan_wall_free_cuts

    recs = read_file(str(devquiz_slice)).records
    walled = [r for r in recs if r.board.shape.walls]
    sizes = {r.board.shape.wall_free().key: r.board.shape.wall_free() for r in walled}
    cuts = {k: layout_partitions(s, 8 << 20, 2) for k, s in sizes.items()}
    assert any(len(c) == 2 for c in cuts.values())  # some size has a second cut
    built = []
    kw = dict(db_dir=tmp_path / "db", memory_limit=8 << 20, layout_memory=8 << 20, workers=1, quick_node_limit=1)
    res = run_pipeline(recs, tmp_path / "a.txt", time_limit=30, on_build=built.append, **kw)
    made = [(b.shape, b.name) for b in built if hasattr(b, "status") and b.kind == "pdb"]
    for key, parts in cuts.items():  # each cut of each size built once, the first by the quick pass
        assert sorted(n for k, n in made if k == key) == sorted(p.name for p in parts)
    for rec, moves in zip(recs, (tmp_path / "a.txt").read_text().split("\n")):
        o = res.outcomes[rec.index]
        assert o.extra["optimal"] and check_moves(rec.board, moves).ok and len(moves) == _truth(rec)
        if rec.board.shape.walls and res.full and rec.index in res.full.outcomes:
            for part in cuts[rec.board.shape.wall_free().key]:  # the solver reads every cut
                assert any(f"wall-free {part.name} (" in name for name in o.extra["heuristic"])
    assert plan_wall_free_cuts(walled, tmp_path / "db", 8 << 20, 2) == []  # all there
    assert plan_wall_free_cuts(walled, tmp_path / "db", 8 << 20, 0) == []
    other = tmp_path / "other"
    other.mkdir()
    key = next(k for k, c in cuts.items() if len(c) == 2)
    (other / f"{key}.pdb.5-5.h5").touch()  # another wall-free table of that size (by its name)
    planned = {p.shape.key: [q.name for q in p.partitions] for p in plan_wall_free_cuts(walled, other, 8 << 20, 2)}
    assert key not in planned and planned == {k: [p.name for p in c] for k, c in cuts.items() if k != key}


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
    )
    t0 = time.time()
    res = run_pipeline(recs, out, time_limit=1.0, node_limit=300, budget=600, **kw)
    assert res.rounds and time.time() - t0 < 600
    assert all(o.extra.get("optimal") for o in res.outcomes.values())  # the slice's boards all fall in the rounds
    first_full = [o for o in res.full.outcomes.values() if not o.extra.get("optimal")]
    # round 1 tries the boards the full pass left whose forecast fits its limit
    assert first_full and 1 <= res.rounds[0][2] <= len(first_full)
    # round k at 2^k limits (a round whose boards all wait for a longer limit is not run)
    assert all(limit == 2.0**k for k, limit, *_ in res.rounds) and res.rounds[0][0] == 1
    answers = out.read_text().split("\n")[:-1]
    assert [len(m) for m in answers] == [_truth(r) for r in recs]
    assert all(check_moves(r.board, m).ok for r, m in zip(recs, answers))
    assert {"full", "retry"} <= {r["step"] for r in _timeline(out)}  # (the quick pass proved nothing: one node)
    none = run_pipeline(recs, tmp_path / "b.txt", node_limit=300, budget=1, **kw)
    assert none.rounds == [] and not any(o.extra.get("optimal") for o in none.outcomes.values())  # none started
    assert none.full_limit == 5.0
    planned = run_pipeline(recs, tmp_path / "c.txt", node_limit=300, budget=400, **kw)
    assert len(recs) == 18 and 8 < planned.full_limit <= round(370 / 36, 1)
    assert Sittings.read(RunFiles(tmp_path / "c.txt").sittings).marks["limit"] == planned.full_limit
    assert {o.extra["time_limit"] for o in planned.full.outcomes.values()} == {planned.full_limit}
    # the last round: what the budget has left, when that is less than twice the round before;
    # its boards start (a last round whose last start was the moment its limit was set started none)
    assert all(limit == planned.full_limit * 2**k for k, limit, *_ in planned.rounds[:-1])
    k, limit, tried = planned.rounds[-1][:3]
    assert limit < planned.full_limit * 2**k and tried >= 1


def test_a_resumed_budget_counts_earlier_sittings_and_skips_rounds_they_ran(devquiz_slice, tmp_path):
    """--budget covers every sitting: a resume has what is left; a round's boards
    journalled at that round's limit in an earlier sitting are not tried again."""
    recs = read_file(str(devquiz_slice)).records
    out = tmp_path / "a.txt"
    kw = dict(db_dir=tmp_path / "db", memory_limit=8 << 20, layout_memory=8 << 20, workers=1, quick_node_limit=1)
    kw.update(time_limit=1.0, node_limit=300)
    unproven = []

    def kill_in_round_one(o):
        if o.extra.get("time_limit") == 1.0 and not o.extra.get("optimal"):
            unproven.append(o.index)
        if o.extra.get("time_limit") == 2.0:
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
    assert all(o.extra.get("optimal") for o in again.outcomes.values())
    spans = Sittings.read(RunFiles(out).sittings).spans
    assert len(spans) == 2 and spans[0][0] == float(real.split()[0]) and spans[1][0] >= spans[0][1]


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
    assert res.rounds and all(o.extra.get("optimal") for o in res.outcomes.values())
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


def test_sittings_count_running_time_across_kills(tmp_path):
    sit = Sittings(RunFiles(tmp_path / "a.txt").sittings, [[0.0, 100.0], [500.0, 530.0], [900.0, 900.0]])
    assert sit.spent_before == 130.0
    assert [sit.running(t) for t in (50.0, 510.0, 950.0)] == [50.0, 110.0, 180.0]
    sit.cover([140.0, 520.0])  # a board journalled after its sitting's last write
    assert sit.spans[0][1] == 140.0 and sit.spans[1][1] == 530.0 and sit.running(901.0) == 171.0


def test_a_feed_starts_nothing_after_its_last_start(devquiz_slice):
    from solver.run.feed import Feed

    recs = read_file(str(devquiz_slice)).records[:3]
    assert Feed(recs, last_start=time.time() - 1).take() == ([], True)
    got, ended = Feed(recs, last_start=time.time() + 60).take()
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
    feed = Feed(recs, [job], last_start=time.time() + 1000, board_seconds=5.0)
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
    late = Feed(recs, [job], last_start=time.time() + 1.0, board_seconds=5.0)
    time.sleep(0.15)  # past the tenth of its time to the last start it spends learning
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
    feed = Feed(recs, jobs, last_start=time.time() + 1.0, board_seconds=5.0)
    time.sleep(0.15)  # past the tenth of its time to the last start it spends learning
    assert feed.give_up(2, []) == []  # none running: nothing to stop, the waiting boards go
    got, ended = feed.take()
    assert sorted(r.index for r in got) == list(range(60)) and ended


def _slow_build(*args, threads, **kw):
    """A build of ten minutes that stops when its grant says so, as the BFS does."""
    from pdb_builder.cores import BuildStopped

    for _ in range(60_000):
        if threads.stopped:
            raise BuildStopped
        time.sleep(0.01)


def test_a_budget_ends_the_run_with_builds_in_flight(devquiz_slice, tmp_path, monkeypatch):
    """Builds that would take ten minutes under a 20-second budget: the boards stop
    waiting for them while they can still all start (18 boards, 2 at a time, 0.75 s
    each: about 11 s in) and are answered without their tables, the builds running
    then are told to stop and named, and the run ends with its answer file, report and
    timeline written."""
    import solver.run.builds as builds
    import solver.run.plan as plan

    monkeypatch.setattr(plan, "RESERVE", 1.0)
    monkeypatch.setattr(builds, "build_pdb", _slow_build)  # the forked workers see it too
    recs = read_file(str(devquiz_slice)).records
    t0 = time.perf_counter()
    kw = dict(db_dir=tmp_path / "db", memory_limit=8 << 20, quick_limit=0.5, workers=2, budget=20)
    res = run_pipeline(recs, tmp_path / "a.txt", **kw)
    took = time.perf_counter() - t0
    assert took < 60, took  # not the builds' ten minutes
    assert res.failed_builds and all("BuildStopped" in text for _, _, text in res.failed_builds)
    answers = (tmp_path / "a.txt").read_text().splitlines()
    assert not res.interrupted and len(answers) == len(recs) and res.timeline.exists()
    # every board waited on a build that never ended: those answered stopped waiting in time
    answered = [(r, m) for r, m in zip(recs, answers) if m]
    assert answered and all(check_moves(r.board, m).ok for r, m in answered)


def test_retry_orders_unproven_boards_by_gap_both_ways():
    def o(length, bound):
        return Outcome(3, "b", "solved", None, {"length": length, "lower_bound": bound})

    gaps = [o(60, 50), o(52, 50), o(70, 64)]  # gaps 10, 2, 6
    assert [x.extra["length"] for x in sorted(gaps, key=retry_order)] == [60, 70, 52]
    assert [x.extra["length"] for x in sorted(gaps, key=lambda x: retry_order(x, closest=True))] == [52, 70, 60]
    assert retry_order(None, closest=True) < retry_order(gaps[1], closest=True)  # unanswered still first
    assert retry_order(gaps[0], True, attempts=1) < retry_order(gaps[1], True, attempts=2)  # least tried first


def test_fit_limits_drops_fewest_and_unproven_first():
    answers = {1: "LLLL", 2: "LR", 3: "LLUD", 4: "RRRR"}
    assert fit_limits(answers, (99, 99, 99, 99)) == set()
    assert fit_limits(answers, None) == set()
    proven = {1: True, 2: True, 3: False, 4: True}
    dropped = fit_limits(answers, (4, 99, 99, 99), optimal=proven)
    assert dropped == {1}  # L over by 3: answer 1 alone takes it away
    assert fit_limits(answers, (6, 99, 99, 99), optimal=proven) == {3}  # over by 1: the unproven one goes
    kept = [m for i, m in answers.items() if i not in dropped]
    assert totals(kept)[0] <= 4 and direction_counts("LRUDL") == (2, 1, 1, 1)


def test_answer_file_never_over_the_move_limits(tmp_path):
    boards = ["3,3,123456708", "3,3,123405786", "3,3,120453786", "3,3,102453786"]
    f = tmp_path / "p.txt"
    f.write_text("1 1 1 1\n4\n" + "\n".join(boards) + "\n")
    out = tmp_path / "a.txt"
    r = CliRunner().invoke(
        main, ["solve", str(f), "--out", str(out), "--db-dir", str(tmp_path / "none"), "--workers", "1"]
    )
    assert r.exit_code == 0, r.output
    lines = out.read_text().split("\n")[:-1]
    use = totals(lines)
    assert all(u <= 1 for u in use) and any(lines) and not all(lines)
    assert "left out" in r.output and "move budget" in r.output


def test_compare_with_another_answer_file(tmp_path):
    boards = ["3,3,123456708", "3,3,123405786", "3,3,120453786"]
    f = tmp_path / "p.txt"
    f.write_text("9 9 9 9\n3\n" + "\n".join(boards) + "\n")
    peer = tmp_path / "peer.txt"
    peer.write_text("LRR\nUU\n")  # board 1: valid but longer; board 2: does not reach the goal; board 3: empty
    recs = read_file(str(f)).records
    ours = {recs[0].index: "R", recs[2].index: "DD"}
    c = compare(peer, recs, ours)
    assert (c.theirs_answered, c.theirs_invalid, c.shorter, c.only_ours, c.theirs_moves) == (1, 1, 1, 1, 3)
    assert "peer.txt:2" in c.problems[0]
    out = tmp_path / "a.txt"
    r = CliRunner().invoke(
        main,
        [
            "solve",
            str(f),
            "--out",
            str(out),
            "--db-dir",
            str(tmp_path / "none"),
            "--workers",
            "1",
            "--compare",
            str(peer),
        ],
    )
    assert r.exit_code == 0 and "against other answer files" in r.output and "peer.txt" in r.output


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
    assert {i: o.extra["length"] for i, o in remote.items()} == {i: o.extra["length"] for i, o in local.items()}
    assert all(check_moves(r.board, m).ok for r, m in zip(recs, (tmp_path / "a.txt").read_text().split("\n")))


def test_dask_cluster_runs_the_builds_too(devquiz_slice, tmp_path, monkeypatch):
    """``run --scheduler``: the builds are tasks on the cluster, on the threads their
    worker's lanes grant (one each on workers of one thread), and a budget's full-pass
    limit is planned for the cluster's threads."""
    distributed = pytest.importorskip("distributed")
    import solver.run.builds as builds
    import solver.run.pipeline as pipeline

    recs = [r for r in read_file(str(devquiz_slice)).records if r.board.shape.size_text == "3x3"]
    real, threads = builds.build_pdb, []

    def noted(shape, part, db_dir, **kw):
        threads.append((threading.current_thread().name, kw["threads"].granted))
        return real(shape, part, db_dir, **kw)

    monkeypatch.setattr(builds, "build_pdb", noted)
    planned = []
    monkeypatch.setattr(
        pipeline, "full_pass_limit", lambda d, todo, slots, building=0.0, **kw: planned.append(slots) or 30.0
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
        )
    assert planned == [2] and res.full_limit == 30.0
    assert len(threads) == len(res.builds) >= 2 and not res.failed_builds
    assert all(name != threading.main_thread().name and n == 1 for name, n in threads)
    assert all(res.outcomes[r.index].extra["length"] == _truth(r) for r in recs)


_HELD = threading.Event()  # set: the held jobs below end


def _held_build(seconds, *, threads):
    """A build job that never looks at its grant (it cannot be told to stop): it holds its
    thread until ``_HELD`` is set or ``seconds`` pass."""
    _HELD.wait(seconds)


def test_dask_builds_never_hold_every_thread_and_the_feed_keeps_its_last_start(devquiz_slice, tmp_path):
    """On a dask cluster, two long builds that never stop (they ignore their grant) and come
    first in the feed's order must not take both of a 2-thread cluster's threads while
    the boards that need no build wait behind them in the cluster's queue, past the
    feed's last start (before, every item went to the cluster at once: the boards
    started when the builds ended)."""
    distributed = pytest.importorskip("distributed")
    from solver.run.cluster import dask_outcomes
    from solver.run.feed import Feed, Job
    from solver.run.slots import Pools

    recs = [r for r in read_file(str(devquiz_slice)).records if r.board.shape.size_text == "3x3"][:6]
    assert len(recs) == 6
    jobs = [Job(_held_build, (60,), [recs[0]]), Job(_held_build, (60,), [recs[1]])]  # each before its board
    _HELD.clear()
    cluster_args = dict(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None)
    try:
        with distributed.LocalCluster(**cluster_args) as cluster, distributed.Client(cluster) as client:
            t0 = time.time()
            feed = Feed(recs, jobs, last_start=t0 + 20, board_seconds=5.0)
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
    from solver.run.feed import Feed, Job
    from solver.run.slots import Pools

    recs = [r for r in read_file(str(devquiz_slice)).records if r.board.shape.size_text == "3x3"][:2]
    _GRANTS.clear()
    feed = Feed(recs, [Job(_granted_build, (30,), [recs[0]])])
    cluster_args = dict(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None)
    with distributed.LocalCluster(**cluster_args) as cluster, distributed.Client(cluster) as client:
        t0 = time.time()
        out = {o.index: o for o in dask_outcomes(feed, Pools(tmp_path / "none"), 5.0, None, True, client)}
    assert _GRANTS[-1] == 2 and time.time() - t0 < 25, _GRANTS
    assert sorted(out) == [r.index for r in recs] and all(out[r.index].extra["length"] == _truth(r) for r in recs)


def test_a_dask_build_nothing_waits_on_is_stopped(devquiz_slice, tmp_path):
    """A build still running on the cluster when the feed ends (past its last start) is
    told to stop and ends at its next chunk; before, it held its thread to the end."""
    distributed = pytest.importorskip("distributed")
    from solver.run.cluster import dask_outcomes
    from solver.run.feed import Feed, Job
    from solver.run.slots import Pools

    recs = [r for r in read_file(str(devquiz_slice)).records if r.board.shape.size_text == "3x3"][:3]
    _STOPPED.clear()
    cluster_args = dict(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None)
    with distributed.LocalCluster(**cluster_args) as cluster, distributed.Client(cluster) as client:
        t0 = time.time()
        feed = Feed(recs, [Job(_build_until_stopped, (60,), [recs[0]])], last_start=t0 + 3)
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
    from solver.run.feed import Feed, Job
    from solver.run.slots import Pools

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
            feed = Feed(recs, jobs)
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
    assert near.extra["length"] == 1 and "threads" not in near.extra
    assert far.extra["optimal"] and far.extra["length"] == recs[1].expected_length
    assert far.extra["threads"] == 2
    assert fixed.outcomes[recs[1].index].extra["optimal"] and "threads" not in fixed.outcomes[recs[1].index].extra


def test_scheduler_unreachable_is_one_line(tmp_path, monkeypatch):
    pytest.importorskip("distributed")
    monkeypatch.setattr("solver.run.cluster.DASK_CONNECT_TIMEOUT", "2s")
    r = CliRunner().invoke(
        main, ["solve", "3,3,123456708", "--scheduler", "tcp://127.0.0.1:1", "--db-dir", str(tmp_path)]
    )
    assert r.exit_code == 2 and "cannot connect" in r.output
    gc.collect()  # distributed's failed connection leaves an asyncio future that logs when collected


def test_cli_run(devquiz_slice, tmp_path):
    out, rep, db = tmp_path / "a.txt", tmp_path / "r.csv", tmp_path / "db"
    args = [
        "run",
        str(devquiz_slice),
        "--out",
        str(out),
        "--report",
        str(rep),
        "--db-dir",
        str(db),
        "--memory-limit",
        "8M",
        "--workers",
        "1",
        "--plot",
        str(tmp_path / "t.png"),
    ]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    assert (tmp_path / "t.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and RunFiles(out).timeline.exists()
    for table in ("proven optimal", "quick pass", "move budget"):
        assert table in r.output
    recs = read_file(str(devquiz_slice)).records
    answers = out.read_text().split("\n")[:-1]
    assert all(check_moves(rec.board, m).ok for rec, m in zip(recs, answers)) and len(answers) == len(recs)
    assert len(rep.read_text().splitlines()) == len(recs) + 1
    r = CliRunner().invoke(main, ["run", str(devquiz_slice), "--out", str(out), "--disk-limit", "lots"])
    assert r.exit_code == 2 and "--disk-limit" in r.output
    r = CliRunner().invoke(main, ["run", str(devquiz_slice), "--out", str(out), "--budget", "4x"])
    assert r.exit_code == 2 and "a duration such as 4h, 90m or 600, or auto, or none" in r.output


def test_a_peer_answer_shorter_than_our_proof_fails_the_run(tmp_path):
    """A journal claims 3 moves optimal for a 1-move board (as a wrong table would); the
    --compare file's 1-move answer contradicts it: reported by line, exit 1."""
    import json

    f = tmp_path / "p.txt"
    f.write_text("9 9 9 9\n2\n3,3,123456708\n3,3,123405786\n")
    out = tmp_path / "a.txt"
    r = CliRunner().invoke(main, ["solve", str(f), "--no-db", "--workers", "1", "--json"])
    assert r.exit_code == 0, r.output
    records = [json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")]
    assert records[0]["moves"] == "R"
    records[0].update(moves="RLR", length=3, lower_bound=3, optimal=True)
    (tmp_path / "a.txt.progress.jsonl").write_text("".join(json.dumps(d) + "\n" for d in records))
    peer = tmp_path / "peer.txt"
    peer.write_text("R\n\n")
    r = CliRunner().invoke(
        main, ["solve", str(f), "--out", str(out), "--no-db", "--workers", "1", "--resume", "--compare", str(peer)]
    )
    assert r.exit_code == 1, r.output
    assert "peer.txt:1: contradiction on board" in r.output and "shorter than the 3 called optimal" in r.output


def test_a_proof_forecast_follows_the_iterations_and_goes_with_the_lower_bound(monkeypatch):
    """The rounds' forecast: the next iteration is the last completed one times the
    growth the last two show (or the run's typical growth), the proof of an answer g
    moves above the bound g / 2 such iterations, at the rate the search ran; an
    iteration a limit stopped counts at least 1.5 times what it searched.  When two
    attempts are merged, the cost record is the one of the attempt that reached the
    higher bound."""
    from solver.outcome import better
    from solver.run.forecast import GROWTH, proof_seconds, typical_growth

    def attempt(lower_bound, length, iterations=(), unfinished=None, optimal=False):
        extra = {"length": length, "lower_bound": lower_bound, "optimal": optimal, "h0": 30, "moves": "x" * length}
        extra.update(iterations=[list(i) for i in iterations])
        if unfinished:
            extra["unfinished"] = list(unfinished)
        return Outcome(0, "b", "solved", None, extra)

    import solver.run.forecast as forecast

    slow = attempt(44, 46, [(40, 1000, 1.0), (42, 5000, 5.0)])  # 1,000 nodes/s: a kernel's load, not a search
    assert proof_seconds(slow) == pytest.approx(25_000 / forecast.MIN_RATE)
    monkeypatch.setattr(forecast, "MIN_RATE", 0.0)  # small numbers below
    shows = attempt(44, 48, [(40, 1000, 1.0), (42, 5000, 5.0)])  # 1,000 nodes/s, growth 5
    assert proof_seconds(shows) == pytest.approx((25_000 + 125_000) / 1000)  # iterations 44 and 46
    assert proof_seconds(attempt(44, 46, shows.extra["iterations"])) == pytest.approx(25.0)
    one = attempt(42, 46, [(40, 800, 1.0)])  # no growth of its own: the run's
    assert proof_seconds(one, typical=3.0) == pytest.approx((2400 + 7200) / 800)
    assert typical_growth([shows, one]) == 5.0 and typical_growth([one]) == GROWTH
    stopped = attempt(42, 44, [(40, 1000, 1.0)], unfinished=(42, 9000, 9.0))  # more than 5x the last already
    assert proof_seconds(stopped) == pytest.approx(13_500 / 1000)
    assert proof_seconds(attempt(44, 44)) == 0.0 and proof_seconds(attempt(40, 44)) is None  # nothing recorded
    assert proof_seconds(Outcome(0, "b", "limit", None, {"lower_bound": 40, "length": None})) is None
    later = attempt(46, 48, [(44, 30_000, 20.0)])
    assert better(shows, later).extra["iterations"] == later.extra["iterations"]
    assert better(later, shows).extra["iterations"] == later.extra["iterations"]  # either order
    kept = better(stopped, attempt(42, 46, [(40, 1000, 1.0)]))  # the same bound: the one that searched more of it
    assert kept.extra["length"] == 44 and kept.extra["unfinished"] == [42, 9000, 9.0]


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


def test_the_last_round_spends_what_the_budget_has_left_on_the_boards_that_waited():
    """A round starts the boards whose forecast proof fits its limit, cheapest first, and
    whose limit grows by a quarter at least; a board whose forecast is over it waits for a
    later round.  In the last round (what the budget has left, no later round) the boards
    that waited start after the others, cheapest forecast first."""
    from types import SimpleNamespace as Rec

    def tried(index, limit):
        return Outcome(index, "b", "solved", None, {"length": 80, "lower_bound": 76, "time_limit": limit})

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
    assert last and limit < 640.0 and deadline - RESERVE - 1.5 * limit >= now + 10.0
    # a short budget keeps back less: a 60 s budget 6 s, not 30 (its last round 3 s to start)
    assert reserve_for(60.0) == 6.0 and reserve_for(20.0) == RESERVE_MIN and reserve_for(3600.0) == RESERVE
    now, deadline = 1000.0, 1040.0
    limit, last = round_limit(5.0, 3, deadline, 1.5, now, reserve_for(60.0))  # 40 s would not fit
    assert last and limit == (40.0 - 6.0 - 3.0) / 1.5


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


def test_a_board_no_pass_started_is_still_counted_unanswered(devquiz_slice, tmp_path):
    """A budget too short for a pass to reach a board still accounts for it (report,
    summary, exit code): its quick pass's outcome when the full pass never started it,
    else ``limit`` with no answer and the reason; no board drops out of the count."""
    recs = read_file(str(devquiz_slice)).records
    kw = dict(db_dir=tmp_path / "db", memory_limit=8 << 20, layout_memory=8 << 20, workers=1, node_limit=300)
    none = run_pipeline(recs, tmp_path / "a.txt", budget=1, quick_node_limit=1, **kw)
    assert sorted(none.outcomes) == sorted(r.index for r in recs)
    assert {(o.status, o.error) for o in none.outcomes.values()} == {("limit", NOT_STARTED)}
    assert all(o.extra["size"] == r.board.shape.size_text for r, o in zip(recs, none.outcomes.values()))
    assert (tmp_path / "a.txt").read_text() == "\n" * len(recs)
    # the quick pass tries the boards (one node each); the full pass's last start (the
    # reserve, 5 s of a 17 s budget, and 3.2 limits of 5 s before the budget's end) has
    # passed when it begins
    t0 = time.time()
    quick = run_pipeline(recs, tmp_path / "b.txt", budget=17, quick_limit=1.0, quick_node_limit=1, **kw)
    assert time.time() - t0 < 17
    assert sorted(quick.outcomes) == sorted(r.index for r in recs)
    assert not quick.full.outcomes and all(o.status == "limit" for o in quick.outcomes.values())
    tried = [o for o in quick.outcomes.values() if o.error != NOT_STARTED]
    assert tried and all(o is quick.quick.outcomes[o.index] for o in tried)
