"""``slidepdb run``: a slice of the DevQuiz file end to end, resume after a kill, its
builds (failed, shared, layouts and wall-free cuts), retries, the move limits and
comparison with other answer files (the budget: tests/test_budget.py; dask:
tests/test_dask.py)."""

import json
import os

import pytest
from click.testing import CliRunner

from pdb_builder.errors import BoardError
from pdb_builder.formats import read_file
from pdb_builder.moves import check_moves
from pdb_builder.storage import open_database
from solver.cli import main
from solver.outcome import Outcome
from solver.run.answer_file import compare, direction_counts, fit_limits, totals
from solver.run.batch import answers_of
from solver.run.files import RunFiles
from solver.run.pipeline import run_pipeline
from solver.run.planning import retry_order
from solver.run.sittings import Sittings

from .conftest import timeline, truth


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
    for path in db.glob("*.pdb.*.h5"):  # a layout's tables keep the costs by region of the blank; a size's not
        tables = open_database(path).tables
        assert all((t.zero is not None) == ("-w" in path.name) for t in tables), path.name
    assert not res.interrupted and len(res.outcomes) == len(recs) and not res.left_out
    answers = out.read_text().split("\n")[:-1]
    assert len(answers) == len(recs)
    for rec, moves in zip(recs, answers):
        o = res.outcomes[rec.index]
        assert check_moves(rec.board, moves).ok
        assert o.optimal and len(moves) == truth(rec), rec.board
        assert any(f"({rec.board.shape.key}.pdb" in name for name in o.heuristic)  # its own layout's
    assert RunFiles(out).journal.exists()  # the per-board record stays; resuming a finished run solves nothing
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
    from solver.run.plans import plan_first

    recs = [
        r for r in read_file(str(devquiz_slice)).records if r.board.shape.size_text == "3x3" and r.board.shape.walls
    ]
    assert len(recs) >= 2 and len({r.board.shape.key for r in recs}) == len(recs)
    # 3x3 wall-free at 8M: one 8-tile pattern, 9!/1! entries; each layout (7 tiles on 8 cells) 8!/1!
    layouts = sum(num_placements(len(r.board.shape.free_cells), len(r.board.shape.tiles)) for r in recs)
    assert layouts < num_placements(9, 8)
    assert {p.role for p in plan_first(recs, frozenset(), 8 << 20, 8 << 20)} == {"layout"}
    # with layouts of 64K patterns, the size's wall-free cut of those sizes comes with them (6,048 entries)
    small = plan_first(recs, frozenset(), 8 << 20, 64 << 10)
    assert [(p.role, p.entries, len(p.records)) for p in small if p.role == "wall-free"] == [
        ("wall-free", 6048, len(recs))
    ]
    assert sum(p.role == "layout" for p in small) == len(recs)
    # at 64K the wall-free table is two 4-tile patterns (6,048 entries): cheaper than the layouts
    assert [p.role for p in plan_first(recs, frozenset(), 64 << 10, 8 << 20)] == ["wall-free"]
    built = []
    res = run_pipeline(recs, tmp_path / "a.txt", db_dir=tmp_path / "db", memory_limit=8 << 20, on_build=built.append)
    assert {p.role for p in built if hasattr(p, "role")} == {"layout"}
    assert not res.full.outcomes and len(res.quick.outcomes) == len(recs)
    for rec, moves in zip(recs, (tmp_path / "a.txt").read_text().split("\n")):
        assert res.outcomes[rec.index].optimal and len(moves) == truth(rec)


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
    assert timeline(out)[-1]["proven"] == "4"  # the timeline of what the journals hold so far
    lines = out.read_text().split("\n")[:-1]
    assert len(lines) == len(recs) and sum(1 for x in lines if x) == 4  # finished answers kept
    with pytest.raises(BoardError, match="--resume"):
        run_pipeline(recs, out, **kw)
    second = run_pipeline(recs, out, resume=True, **kw)
    assert not second.interrupted and len(second.outcomes) == len(recs)
    assert second.full.resumed == 4  # nothing solved twice
    answers = out.read_text().split("\n")[:-1]
    assert answers[:0] == [] and all(check_moves(r.board, m).ok for r, m in zip(recs, answers))
    assert [len(m) for m in answers] == [second.outcomes[r.index].length for r in recs]
    rows = timeline(out)
    spans = Sittings.read(RunFiles(out).sittings).spans
    assert len(spans) == 2 and spans[0][0] == started  # the resumed run counts on from the first sitting's time
    assert [float(r["elapsed_s"]) for r in rows] == sorted(float(r["elapsed_s"]) for r in rows)
    final = second.outcomes.values()
    assert int(rows[-1]["proven"]) == sum(bool(o.optimal) for o in final)
    assert int(rows[-1]["answered"]) == sum(o.status == "solved" for o in final)
    for size in {r["size"] for r in rows}:
        last = [r for r in rows if r["size"] == size][-1]
        want = sum(bool(o.optimal) for o in final if o.size == size)
        assert int(last["size_proven"]) == want and int(last["size_boards"]) == sum(
            r.board.shape.size_text == size for r in recs
        )
    assert {r["step"] for r in rows} <= {"quick", "full"} and "full" in {r["step"] for r in rows}


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
    assert failed and sorted(f.shape_key for f in res.failed_builds) == sorted(failed)
    assert all(f.how == "failed" and "No space left" in f.reason for f in res.failed_builds)
    assert not res.interrupted and len(res.outcomes) == len(recs)
    for rec, moves in zip(recs, out.read_text().split("\n")):  # every board answered, layouts or not
        assert check_moves(rec.board, moves).ok
        assert not any(
            f"({rec.board.shape.key}.pdb" in n for n in res.outcomes[rec.index].heuristic if rec.board.shape.walls
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
    forked workers see the patched build), the wall-free ones the cheapest a board first,
    and the boards that wait on it are proven."""
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
    assert wall_free == ["3x3", "3x4", "4x3"]  # six boards each: the cheapest first (3x4 and 4x3 alike: file order)
    rows = [line.split() for line in seen.read_text().splitlines()]
    sizes = {r.board.shape.wall_free().key for r in recs}
    layouts = {r.board.shape.key for r in recs if r.board.shape.walls}
    assert sorted(key for _, _, key in rows) == sorted(sizes | layouts)
    assert all(int(pid) != os.getpid() and threads == "Share" for pid, threads, _ in rows)
    assert len(res.builds) == len(rows) and not res.failed_builds
    for rec in recs:
        o = res.outcomes[rec.index]
        assert o.optimal and o.length == truth(rec)
        if rec.board.shape.walls:  # proven on its own layout's table: solved after that build
            assert any(f"({rec.board.shape.key}.pdb" in name for name in o.heuristic)


def test_retry_unanswered_boards_worst_first(devquiz_slice, tmp_path):
    recs = read_file(str(devquiz_slice)).records
    out = tmp_path / "a.txt"
    kw = dict(db_dir=tmp_path / "db", build=False, workers=1)
    first = run_pipeline(recs, out, node_limit=1, fallback=False, **kw)
    assert all(o.status == "limit" for o in first.outcomes.values())
    # a retry killed after its first two boards, each stopped at its limit again (its
    # journal lines, as a kill leaves them): run again, it goes on with the others first
    journal = RunFiles(out).journal
    lines = map(json.loads, journal.read_text().splitlines())
    cut = [d for d in lines if d.get("index") in (recs[0].index, recs[1].index) and d["step"] == "full"]
    assert len(cut) == 2 and all(d["status"] == "limit" for d in cut)
    journal.write_text(journal.read_text() + "".join(json.dumps(d) + "\n" for d in cut))
    order = []
    again = run_pipeline(recs, out, resume=True, retry="unanswered", on_outcome=lambda o: order.append(o.index), **kw)
    assert again.full.resumed == 0 and order == [r.index for r in recs[2:] + recs[:2]]
    rows = timeline(out)
    assert sum(r["step"] == "retry" for r in rows) == len(recs) + 2  # every board tried again, the first two twice
    assert rows[-1]["proven"] == str(len(recs))
    answers = out.read_text().split("\n")[:-1]
    assert all(again.outcomes[r.index].optimal and check_moves(r.board, m).ok for r, m in zip(recs, answers))
    assert retry_order(None) < retry_order(again.outcomes[recs[0].index])  # unsolved boards go first
    with pytest.raises(ValueError, match="retry"):
        run_pipeline(recs, out, resume=True, retry="everything", **kw)


@pytest.mark.parametrize("form", ["one journal", "three files"])
def test_a_resumed_run_without_its_answer_pass_keeps_its_answers_and_retries_by_what_stands(
    devquiz_slice, tmp_path, form
):
    """A budget run's answer pass answered three boards (unproven). The quick pass stopped
    at its limit on each with no answer, on the third with a bound as long as its answer
    (so that board is proven); the full pass stopped on the first two with no answer, on
    the first with a bound as long as its answer (proven), on the second short of it.
    The journal read whole says so (``journalled_outcomes``), and ``--resume --retry
    unproven`` without a budget (no answer pass) retries only the second and keeps every
    answer in the answer file.  So it goes from a journal whose lines name their steps,
    and from one of the three-file form (each pass's lines in a file of its own, naming
    no step): folded into one journal as the run resumes, nothing solved twice."""
    from solver.run.journal import journal_attempts
    from solver.run.pipeline import journalled_outcomes

    recs = read_file(str(devquiz_slice)).records
    kw = dict(db_dir=tmp_path / "db", build=False, workers=1)
    first = run_pipeline(recs, tmp_path / "x.txt", **kw)
    picked = [r for r in recs if (o := first.outcomes[r.index]).optimal and o.length >= o.h0 + 2][:3]
    assert len(picked) == 3
    files = RunFiles(tmp_path / "a.txt")
    lines = {"answer 1": [], "quick": [], "full": []}
    for k, rec in enumerate(picked):
        o = first.outcomes[rec.index]
        d = {key: v for key, v in o.as_json().items() if key not in ("proof", "certificate")}
        unanswered = {**d, "status": "limit", "moves": None, "length": None, "optimal": False}
        lines["answer 1"].append({**d, "optimal": False, "lower_bound": o.h0})
        lines["quick"].append({**unanswered, "lower_bound": o.length if k == 2 else o.h0})
        if k < 2:
            lines["full"].append({**unanswered, "lower_bound": o.length - 2 * k})
    if form == "one journal":
        tagged = [{**d, "step": step} for step, ds in lines.items() for d in ds]
        files.journal.write_text("".join(json.dumps(d) + "\n" for d in tagged))
        stood = journalled_outcomes(picked, files)
        assert [stood[r.index].optimal for r in picked] == [True, False, True]
    else:
        paths = {"answer 1": files.earlier_journals["answer"], "quick": files.earlier_journals["quick"]}
        for step, ds in lines.items():
            paths.get(step, files.journal).write_text("".join(json.dumps(d) + "\n" for d in ds))
    res = run_pipeline(picked, files.answers, resume=True, retry="unproven", node_limit=1, fallback=False, **kw)
    assert files.journals() == [files.journal]  # (the three-file form folded into it)
    assert journal_attempts(files.journal, picked, of="full") == {picked[0].index: 1, picked[1].index: 2}
    assert journal_attempts(files.journal, picked) == {picked[0].index: 3, picked[1].index: 4, picked[2].index: 2}
    assert [res.outcomes[r.index].optimal for r in picked] == [True, False, True]
    assert all(check_moves(r.board, m).ok for r, m in zip(picked, files.answers.read_text().splitlines()))


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
        assert o.optimal and check_moves(rec.board, moves).ok and len(moves) == truth(rec)
        for part in second[rec.board.shape.key]:  # the solver reads both cuts
            assert any(f"pdb.{part.name}.h5" in name for name in o.heuristic)


def test_the_full_pass_builds_wall_free_cuts_for_the_sizes_of_its_walled_boards(devquiz_slice, tmp_path):
    """Beside each layout, the full pass builds the walled boards' sizes' wall-free
    cuts of the layout's pattern sizes (the quick pass built the first), and the boards
    are proven reading them; a size whose folder holds another wall-free table gets none."""
    from pdb_builder.make.building import layout_partitions
    from solver.run.builds import folder_names
    from solver.run.plans import plan_wall_free_cuts

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
        assert o.optimal and check_moves(rec.board, moves).ok and len(moves) == truth(rec)
        if rec.board.shape.walls and res.full and rec.index in res.full.outcomes:
            for part in cuts[rec.board.shape.wall_free().key]:  # the solver reads every cut
                assert any(f"wall-free {part.name} (" in name for name in o.heuristic)
    assert plan_wall_free_cuts(walled, folder_names(tmp_path / "db"), 8 << 20, 2) == []  # all there
    assert plan_wall_free_cuts(walled, folder_names(tmp_path / "db"), 8 << 20, 0) == []
    other = tmp_path / "other"
    other.mkdir()
    key = next(k for k, c in cuts.items() if len(c) == 2)
    (other / f"{key}.pdb.5-5.h5").touch()  # another wall-free table of that size (by its name)
    planned = {
        p.shape.key: [q.name for q in p.partitions]
        for p in plan_wall_free_cuts(walled, folder_names(other), 8 << 20, 2)
    }
    assert key not in planned and planned == {k: [p.name for p in c] for k, c in cuts.items() if k != key}


def test_retry_orders_unproven_boards_by_gap_both_ways():
    def o(length, bound):
        return Outcome(3, "b", "solved", None, length=length, lower_bound=bound)

    gaps = [o(60, 50), o(52, 50), o(70, 64)]  # gaps 10, 2, 6
    assert [x.length for x in sorted(gaps, key=retry_order)] == [60, 70, 52]
    assert [x.length for x in sorted(gaps, key=lambda x: retry_order(x, closest=True))] == [52, 70, 60]
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
    assert r.exit_code == 4, r.output  # boards without an answer in the file: a limit's exit code
    lines = out.read_text().split("\n")[:-1]
    use = totals(lines)
    assert all(u <= 1 for u in use) and any(lines) and not all(lines)
    assert "left out" in r.output and "move limits" in r.output


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


@pytest.mark.slow
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
    for table in ("proven optimal", "quick pass", "move limits"):
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

    f = tmp_path / "p.txt"
    f.write_text("9 9 9 9\n2\n3,3,123456708\n3,3,123405786\n")
    out = tmp_path / "a.txt"
    r = CliRunner().invoke(main, ["solve", str(f), "--no-db", "--workers", "1", "--json"])
    assert r.exit_code == 0, r.output
    records = [json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")]
    assert records[0]["moves"] == "R"
    records[0].update(moves="RLR", length=3, lower_bound=3, optimal=True)
    records[0]["certificate"].update(threshold=3, length=3)  # a proof of its own as a wrong estimate would make
    (tmp_path / "a.txt.progress.jsonl").write_text("".join(json.dumps(d) + "\n" for d in records))
    peer = tmp_path / "peer.txt"
    peer.write_text("R\n\n")
    r = CliRunner().invoke(
        main, ["solve", str(f), "--out", str(out), "--no-db", "--workers", "1", "--resume", "--compare", str(peer)]
    )
    assert r.exit_code == 1, r.output
    assert "peer.txt:1: contradiction on board" in r.output and "shorter than the 3 called optimal" in r.output
