import csv
import json
import os
from dataclasses import fields, replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from pdb_builder.board import Shape
from pdb_builder.errors import BoardError
from pdb_builder.formats import read_file
from pdb_builder.moves import check_moves
from solver.cli import main
from solver.outcome import Outcome, better
from solver.run.batch import run_batch
from solver.run.files import RunFiles
from solver.run.journal import read_journal

from .conftest import bfs_lengths, flip_bit
from .naive import bfs_distances
from .test_inspect import walk

RECORD = {f.name for f in fields(Outcome)} - {"index", "board", "status", "error", "more"}


def test_interrupted_run_resumes_without_loss(problems, tmp_path):
    recs = read_file(str(problems)).records
    out = tmp_path / "answers.txt"
    seen = []

    def stop_after_three(o):
        seen.append(o.index)
        if len(seen) == 3:
            raise KeyboardInterrupt

    first = run_batch(recs, db_dir=tmp_path / "none", out_path=out, on_outcome=stop_after_three)
    assert first.interrupted and len(first.outcomes) == 3
    lines = out.read_text().split("\n")[:-1]
    assert len(lines) == 8 and sum(1 for x in lines if x) == 3  # finished answers kept
    assert RunFiles(out).journal.exists()
    with pytest.raises(BoardError, match="--resume"):
        run_batch(recs, db_dir=tmp_path / "none", out_path=out)
    second = run_batch(recs, db_dir=tmp_path / "none", out_path=out, resume=True)
    assert second.resumed == 3 and not second.interrupted and len(second.outcomes) == 8
    assert not RunFiles(out).journal.exists()
    answers = out.read_text().split("\n")[:-1]
    exact = bfs_lengths(recs)
    for rec, moves in zip(recs, answers):
        if rec.index == 10:
            assert moves == ""  # unsolvable
        else:
            assert check_moves(rec.board, moves).ok and len(moves) == exact[rec.index]


def test_sigterm_that_a_library_turned_into_another_error_still_stops_the_batch(problems, tmp_path, monkeypatch):
    """numba's compiler, interrupted mid-compile, raises RuntimeError instead of the
    KeyboardInterrupt: the batch stops there (not one board's error, then the next board),
    and a plain error on a board, with no stop asked for, stays that board's error."""
    import solver.api as one_board
    import solver.search.limits as budget

    recs = read_file(str(problems)).records
    monkeypatch.setattr(budget, "_stopping", False)
    real, calls = one_board._solve_valid, []

    def interrupted_compile(rec, *args):
        calls.append(rec.index)
        if len(calls) == 3:
            try:
                budget.request_stop()  # what the CLI's SIGTERM handler runs
            except KeyboardInterrupt:
                raise RuntimeError("no compiled object yet") from None
        return real(rec, *args)

    monkeypatch.setattr(one_board, "_solve_valid", interrupted_compile)
    out = tmp_path / "a.txt"
    res = run_batch(recs, db_dir=tmp_path / "none", out_path=out)
    assert res.interrupted and len(calls) == 3
    assert sorted(res.outcomes) == sorted(calls[:2]) and all(o.status == "solved" for o in res.outcomes.values())
    assert sum(1 for x in out.read_text().split("\n") if x) == 2

    def plain_error(rec, *args):
        raise RuntimeError("a bug")

    monkeypatch.setattr(budget, "_stopping", False)
    monkeypatch.setattr(one_board, "_solve_valid", plain_error)
    res = run_batch(recs, db_dir=tmp_path / "none")
    assert not res.interrupted and sum(o.status == "error" for o in res.outcomes.values()) == 7


def test_a_stop_whose_exception_python_dropped_still_ends_a_batch_of_workers(tmp_path, monkeypatch):
    """The handler's KeyboardInterrupt can be dropped (raised inside a fork's hooks:
    "Exception ignored in ... _releaseLock"); the flag it set first stays, and the batch
    that hands boards to worker processes looks at it between its waits: it ends within
    a second or two, not at its boards' 60-second limits, and says it was interrupted."""
    import threading
    import time

    import solver.search.limits as limits

    monkeypatch.setattr(limits, "_stopping", False)
    boards = tmp_path / "far.txt"
    boards.write_text("6,5,9304781Q2==5=S=INLPKGMC6ERHJ=O\n" * 4)  # far beyond Manhattan distance's reach
    recs = read_file(str(boards)).records
    timer = threading.Timer(2.0, setattr, (limits, "_stopping", True))  # the flag alone, no exception
    t0 = time.perf_counter()
    timer.start()
    try:
        res = run_batch(recs, use_db=False, workers=2, time_limit=60, fallback=False, out_path=tmp_path / "a.txt")
    finally:
        timer.cancel()
    assert res.interrupted and not res.outcomes
    assert time.perf_counter() - t0 < 20


def test_torn_or_forged_journal_lines_are_solved_again(problems, tmp_path):
    recs = read_file(str(problems)).records
    out = tmp_path / "a.txt"
    j = RunFiles(out).journal
    good = {
        "index": 3,
        "board": str(recs[0].board),
        "status": "solved",
        "moves": "L",
        "length": 1,
        "optimal": True,
    }  # forged: L does not solve board 3
    j.write_text(json.dumps(good) + "\n" + '{"index": 4, "board": "3,3')
    res = run_batch(recs, db_dir=tmp_path / "none", out_path=out, resume=True)
    assert res.resumed == 0 and len(res.outcomes) == 8
    assert all(check_moves(r.board, m).ok for r, m in zip(recs[:7], out.read_text().split("\n")))


def test_two_workers_same_lengths(problems, tmp_path):
    recs = read_file(str(problems)).records
    one = run_batch(recs, db_dir=tmp_path / "none", workers=1).outcomes
    two = run_batch(recs, db_dir=tmp_path / "none", workers=2).outcomes
    assert {i: o.length for i, o in one.items()} == {i: o.length for i, o in two.items()}
    assert two[10].status == "unsolvable"


def test_cli_report_summary_and_exit(problems, tmp_path):
    out, rep = tmp_path / "a.txt", tmp_path / "r.csv"
    r = CliRunner().invoke(
        main,
        [
            "solve",
            str(problems),
            "--out",
            str(out),
            "--report",
            str(rep),
            "--db-dir",
            str(tmp_path / "none"),
            "--workers",
            "1",
        ],
    )
    assert r.exit_code == 3  # one unsolvable board
    assert "proven optimal" in r.stdout and "8/8 boards" in r.stdout
    rows = list(csv.DictReader(rep.open()))
    assert [int(x["index"]) for x in rows] == list(range(3, 11))
    assert rows[-1]["status"] == "unsolvable" and rows[0]["optimal"] == "True"
    r = CliRunner().invoke(main, ["solve", str(problems), "--resume"])
    assert r.exit_code == 2 and "--resume needs --out" in r.output


def test_retry_solves_again_and_keeps_the_better_outcome(problems, tmp_path):
    recs = read_file(str(problems)).records
    journal = tmp_path / "j.jsonl"
    first = run_batch(recs, db_dir=tmp_path / "none", journal=journal, node_limit=1, fallback=False)
    stopped = {i for i, o in first.outcomes.items() if o.status == "limit"}
    assert stopped and all(first.outcomes[i].lower_bound > 0 for i in stopped)
    again = run_batch(recs, db_dir=tmp_path / "none", journal=journal, resume=True, retry=stopped)
    assert again.resumed == len(recs) - len(stopped)
    exact = bfs_lengths(recs)
    for i in stopped:
        o = again.outcomes[i]
        assert o.optimal and o.length == exact[i]
    # the journal's last word on each board is the better one, and a worse retry does not replace it
    assert {i: o.moves for i, o in read_journal(journal, recs).items() if i in stopped} == {
        i: again.outcomes[i].moves for i in stopped
    }
    worse = run_batch(
        recs, db_dir=tmp_path / "none", journal=journal, resume=True, retry=stopped, node_limit=1, fallback=False
    )
    assert all(worse.outcomes[i].optimal for i in stopped)


def test_a_fallback_answer_as_long_as_the_proven_bound_is_flagged_optimal(problems, tmp_path):
    """The lower bound is an IDA* threshold reached with every lower one completed, so an
    answer that meets it is optimal (when an iteration completed: the bound is past h0);
    the flag must agree with exhaustive BFS every time."""
    recs = read_file(str(problems)).records
    exact = bfs_lengths(recs)
    by_bound = 0
    for limit in (100, 1000, 2000, 4000):  # unanswered, fallback answers, one polished down to the bound
        res = run_batch(recs, db_dir=tmp_path / "none", node_limit=limit)
        for i, o in res.outcomes.items():
            if o.status != "solved":
                continue
            assert o.lower_bound <= exact[i] <= o.length
            met = o.length == o.lower_bound > o.h0
            assert o.optimal == (o.length == exact[i] and (met or o.fallback is None))
            by_bound += o.proof == "length equals the lower bound"
    assert by_bound > 0


def test_better_prefers_proven_then_shorter_and_keeps_the_higher_bound():
    def o(status, length=None, optimal=False, bound=None, h0=None):
        return Outcome(3, "b", status, length=length, optimal=optimal, lower_bound=bound, h0=h0)

    def recorded(x):  # the fields that are set
        return {f.name: getattr(x, f.name) for f in fields(x) if f.name in RECORD and getattr(x, f.name) != f.default}

    assert recorded(better(o("limit", bound=40), o("solved", 50, bound=30))) == {
        "length": 50,
        "optimal": False,
        "lower_bound": 40,
    }
    assert better(o("solved", 52, True, 52), o("solved", 56, False, 45)).length == 52
    assert better(o("solved", 60), o("solved", 55)).length == 55
    assert recorded(better(o("solved", 55), o("limit", bound=52))) == {
        "length": 55,
        "optimal": False,
        "lower_bound": 52,
    }
    # a retry's higher bound proves the kept answer optimal (an iteration past h0 completed) ...
    assert recorded(better(o("limit", bound=50, h0=40), o("solved", 50, bound=44, h0=40))) == {
        "length": 50,
        "optimal": True,
        "lower_bound": 50,
        "h0": 40,
        "proof": "length equals the lower bound",
        "certificate": {"threshold": 50, "length": 50, "how": "bound", "tables": {}},
    }
    # ... but an answer as long as h0 alone, or with no h0 on record, is not called optimal
    assert not better(o("limit", bound=40, h0=40), o("solved", 40, bound=40, h0=40)).optimal
    assert not better(o("limit", bound=50), o("solved", 50, bound=44)).optimal


def test_one_board_that_fails_never_stops_a_batch(tmp_path, monkeypatch):
    """An unexpected error on one board (here an OSError from its search) is that board's
    outcome (status error, exit 1, --retry unanswered solves it again); the others go on."""
    import solver.api as one_board

    real = one_board._solve_valid

    def fail_on_second(rec, *a, **k):
        if rec.index == 2:
            raise FileNotFoundError(2, "No such file or directory")
        return real(rec, *a, **k)

    monkeypatch.setattr(one_board, "_solve_valid", fail_on_second)
    f = tmp_path / "p.txt"
    f.write_text("3,3,123456708\n3,3,123405786\n3,3,123456078\n")
    res = run_batch(read_file(str(f)).records, use_db=False, workers=1, out_path=tmp_path / "a.txt")
    assert [res.outcomes[i].status for i in (1, 2, 3)] == ["solved", "error", "solved"]
    assert "FileNotFoundError" in res.outcomes[2].error and res.outcomes[2].exit_code == 1
    lines = (tmp_path / "a.txt").read_text().split("\n")[:3]
    assert lines[0] and not lines[1] and lines[2]


def test_an_answer_shorter_than_a_proof_is_a_contradiction():
    """Two simulated answers for one board where one is shorter than the other's proven
    length (or proven lower bound): reported, the shorter kept, nothing called optimal."""

    def o(status, length=None, optimal=False, bound=None):
        return Outcome(
            3,
            "3,3,123456708",
            status,
            length=length,
            optimal=optimal,
            lower_bound=bound,
            heuristic=["exact 7-8 (x.h5)"],
        )

    for old, new in (
        (o("solved", 50, True, 50), o("solved", 49, False, 45)),
        (o("solved", 49, False, 45), o("solved", 50, True, 50)),
    ):
        kept = better(old, new)
        assert kept.length == 49 and kept.optimal is False and kept.exit_code == 1
        assert "49 moves is shorter than the 50 called optimal" in kept.contradiction
        assert "exact 7-8 (x.h5)" in kept.contradiction and kept.lower_bound == 45
    kept = better(o("limit", bound=52), o("solved", 50, False, 40))
    assert "shorter than the proven lower bound 52" in kept.contradiction and kept.exit_code == 1
    assert kept.lower_bound == 40
    assert better(o("solved", 50, True, 50), o("solved", 50, False, 44)).contradiction is None


def test_every_optimal_answer_carries_its_certificate(tmp_path):
    """The completed iteration's threshold, the length, and each table file's checksums."""
    import shutil

    from pdb_builder.storage import open_database

    fixture = Path(__file__).parent / "data" / "3x3-devquiz.pdb.3-3-2.v1.h5"
    db = tmp_path / "db"
    db.mkdir()
    shutil.copy(fixture, db / fixture.name)
    sums = [str(t.attrs["sha256"])[:16] for t in open_database(db / fixture.name).tables]
    f = tmp_path / "p.txt"
    f.write_text("3,3,123456708\n3,3,813402765\n")
    dist = bfs_distances(Shape.devquiz(3, 3))
    recs = read_file(str(f)).records
    for use_db, tables in ((False, {}), (True, {fixture.name: sums})):
        res = run_batch(recs, db_dir=db, use_db=use_db, workers=1)
        for rec in recs:
            o = res.outcomes[rec.index]
            cert = o.certificate
            assert o.optimal and cert["length"] == cert["threshold"] == dist[rec.board.cells]
            assert cert["tables"] == tables and cert["how"] == "search"
    # a goal table read counts too: its keys' and distances' checksums
    from pdb_builder.make.building import build_goal_table

    goal = Path(build_goal_table(Shape.devquiz(3, 3), 6, db).path)
    gdb = open_database(goal)
    assert len(gdb.checksums) == 2 and all(len(c) == 64 for c in gdb.checksums)
    res = run_batch(recs, db_dir=db, workers=1)
    for o in res.outcomes.values():
        assert o.certificate["tables"] == {fixture.name: sums, goal.name: [c[:16] for c in gdb.checksums]}


def test_a_resume_reopens_proofs_whose_tables_changed(problems, tmp_path):
    """Journal lines carry the version and each table's checksum; after one table file
    changes (an entry lowered, its checksum rewritten: still admissible) a resume
    withdraws the proofs that read it, solves those boards again, and counts them."""
    import numpy as np

    from pdb_builder import __version__
    from pdb_builder.make.building import build_pdb
    from pdb_builder.patterns import named_partition

    from .test_inspect import _tamper

    db = tmp_path / "db"
    shape = Shape.devquiz(3, 3)
    build_pdb(shape, named_partition(shape, "4-4"), db)
    recs = read_file(str(problems)).records
    journal = tmp_path / "j.jsonl"
    first = run_batch(recs, db_dir=db, journal=journal)
    name = next(db.glob("*.h5")).name
    served = {i for i, o in first.outcomes.items() if o.optimal and name in o.tables}
    assert served and all(o.version == __version__ for o in first.outcomes.values() if o.status == "solved")
    assert run_batch(recs, db_dir=db, journal=journal, resume=True).reopened == 0  # nothing changed

    def lower(data):
        r = int(np.flatnonzero(data == data[data < 255].max())[0])
        data[r] -= 2

    path = db / name
    _tamper(path, tmp_path / name, "tables/0", lower).replace(path)
    again = run_batch(recs, db_dir=db, journal=journal, resume=True)
    assert again.reopened == len(served) and again.resumed == len(recs) - len(served)
    exact = bfs_lengths(recs)
    for i in served:  # proven again, on the tables as they are now
        o = again.outcomes[i]
        assert o.optimal and o.length == exact[i] and o.reopened is None
        assert o.certificate["tables"][name] != first.outcomes[i].certificate["tables"][name]
    assert run_batch(recs, db_dir=db, journal=journal, resume=True).reopened == 0
    path.unlink()  # a table file gone: its proofs reopen too
    gone = read_journal(journal, recs, now=lambda n: None)
    assert all(not gone[i].optimal and gone[i].reopened is not None for i in served)


def _churn(db, versions, stop, counts):
    """Until ``stop``: replace each file of ``db`` by one of its ``versions`` (another
    layout of the same tables: other offsets in the file), or remove it for a moment,
    as builds publishing and a user tidying up would, through a temporary name."""
    import random
    import shutil
    import time

    rnd = random.Random(7)
    names = sorted(versions)
    while not stop.is_set():
        name = rnd.choice(names)
        tmp = db / f".{name}.churn"
        if rnd.random() < 0.3:
            (db / name).unlink(missing_ok=True)
            counts["removed"] += 1
            time.sleep(0.002)
        shutil.copyfile(rnd.choice(versions[name]), tmp)
        os.replace(tmp, db / name)
        counts["replaced"] += 1


def test_boards_go_on_while_table_files_are_replaced_and_removed(tmp_path, monkeypatch, tune):
    """Three workers solve boards of four layouts, each board loading its tables again,
    while another thread replaces every table file again and again with a copy of
    other offsets and now and then removes one: no board ends in an error, every
    answer is at its exhaustive-BFS length when proven, and the batch never stops."""
    import shutil
    import threading

    from pdb_builder.formats import read_lines
    from pdb_builder.make.building import build_pdb
    from pdb_builder.patterns import parse_partition

    from .naive import distance

    db, alt = tmp_path / "db", tmp_path / "alt"
    shapes = [Shape.devquiz(3, 4, [w]) for w in (1, 4, 5, 7)]
    versions = {}
    for s in shapes:
        tiles = list(s.tiles)
        spec = ",".join(map(str, tiles[:5])) + "/" + ",".join(map(str, tiles[5:]))
        part = parse_partition(spec, s)
        names = []
        for folder, layout in ((alt, "contiguous"), (alt / "z", "compressed")):
            names.append(Path(build_pdb(s, part, folder, layout=layout, two_bit=False, progress=None).path))
        versions[names[0].name] = names
    db.mkdir()
    # round robin: each board loads its layout's tables again
    lines = [walk(shapes[k % len(shapes)], steps=60, seed=k) for k in range(48)]
    recs = read_lines(lines, "churn").records
    tune(searchers=1)  # (the forked workers see it too)
    stop, counts = threading.Event(), {"removed": 0, "replaced": 0}
    for name, (first, _) in versions.items():
        shutil.copyfile(first, db / name)
    churner = threading.Thread(target=_churn, args=(db, versions, stop, counts))
    churner.start()
    try:
        res = run_batch(recs, db_dir=db, workers=3, time_limit=30, go_on=True)
    finally:
        stop.set()
        churner.join()
    assert counts["removed"] > 10 and counts["replaced"] > 100
    assert len(res.outcomes) == len(recs) and not [o.error for o in res.outcomes.values() if o.status != "solved"]
    for rec in recs:
        o = res.outcomes[rec.index]
        assert check_moves(rec.board, o.moves).ok
        if o.optimal:
            assert o.length == distance(rec.board.shape, rec.board.cells)


def test_a_damaged_table_is_left_out_and_named(tmp_path):
    """A run's batch (``go_on``) with two 3x3 databases: one whose table bytes fail their
    checksums (found while a board searches: its blocks are checked lazily), one whose
    header is foreign (found when it is opened).  Every board is still proven at its
    exhaustive-BFS length, and each outcome names both files left out; a batch that
    does not go on stops, naming the file."""

    import h5py

    from pdb_builder.errors import DatabaseError
    from pdb_builder.formats import read_lines
    from pdb_builder.make.building import build_pdb
    from pdb_builder.patterns import named_partition, parse_partition

    from .naive import distance

    shape, db = Shape.devquiz(3, 3), tmp_path / "db"
    flipped = Path(build_pdb(shape, named_partition(shape, "4-4"), db, two_bit=False, progress=None).path)
    foreign = Path(build_pdb(shape, parse_partition("1,2,3/4,5,6/7,8", shape, "3-3-2"), db, progress=None).path)
    flip_bit(flipped, "tables/0", 101, 0x04)
    with h5py.File(foreign, "r+") as f:
        f.attrs["magic"] = "other"
    recs = read_lines([walk(shape, steps=40, seed=k) for k in range(4)], "damaged").records
    res = run_batch(recs, db_dir=db, workers=1, go_on=True)
    for rec in recs:
        o = res.outcomes[rec.index]
        assert o.status == "solved" and o.optimal
        assert o.length == distance(shape, rec.board.cells)
        assert sorted(o.tables_left_out) == sorted([flipped.name, foreign.name])
    with pytest.raises(DatabaseError, match=foreign.name):
        run_batch(recs, db_dir=db, workers=1)


def test_a_later_attempt_that_found_less_never_stands_in_for_an_answer(problems, tmp_path, monkeypatch):
    """A board journalled twice (a retry's search stopped at its limit after an earlier
    one answered it), or handed out twice in one batch: the answer and the proof stand,
    in the batch's outcomes and after a resume."""
    import solver.run.batch as batch_mod

    rec = read_file(str(problems)).records[0]
    journal = tmp_path / "j.jsonl"
    solved = run_batch([rec], db_dir=tmp_path / "none", journal=journal).outcomes[rec.index]
    assert solved.status == "solved" and solved.optimal
    bound = solved.length
    limit = Outcome(rec.index, str(rec.board), "limit", "limit reached before an answer", lower_bound=bound)
    with open(journal, "a", encoding="utf-8") as f:
        f.write(json.dumps(limit.as_json()) + "\n")
    again = read_journal(journal, [rec])[rec.index]
    assert again.status == "solved" and again.optimal and again.moves == solved.moves

    def twice(feed, *args):  # the same board's two outcomes: its answer, then a search that found none
        yield replace(solved)
        yield Outcome(rec.index, str(rec.board), "limit", "limit", lower_bound=bound)

    monkeypatch.setattr(batch_mod, "local_outcomes", twice)
    out = run_batch([rec], db_dir=tmp_path / "none", out_path=tmp_path / "a.txt").outcomes[rec.index]
    assert out.status == "solved" and out.optimal
    assert (tmp_path / "a.txt").read_text() == solved.moves + "\n"
