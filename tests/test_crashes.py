"""Kill -9 at known points: a build (mid-BFS, after a table is written, just before it is
published), a batch and a run (after so many boards are journalled), and a resume of
each.  Afterwards every database file verifies or is never read, and no journalled
answer is lost or solved again.  The points are reached by the work itself (a BFS layer,
a board journalled), where the process waits to be killed: never by sleeping."""

import json
import signal
import time

import pytest
from click.testing import CliRunner

from solver.cli import main
from solver.run.files import RunFiles

from .test_many_hands import HANG, _all_answered, _boards, _child, _held, _slidepdb

pytestmark = pytest.mark.slow  # a dozen processes started and killed: about a minute

BUILD = """
from pdb_builder.board import Shape
from pdb_builder.make.building import build_pdb
from pdb_builder.patterns import named_partition
where = sys.argv[2]
shape = Shape.devquiz(3, 3)
def progress(pattern, depth, *rest):
    if where == "bfs" and (pattern, depth) == (1, 3):
        HOLD("kill")
def on_step(pattern, what, seconds):
    if (where, pattern, what) in (("written", 0, "two-bit copy made and checked"), ("publish", None, "file verified")):
        HOLD("kill")
build_pdb(shape, named_partition(shape, "4-4"), sys.argv[1], progress=progress, on_step=on_step)
"""


def _killed(tmp_path, code, *args, tag="kill"):
    """The process of ``code`` killed with SIGKILL where it waits at ``tag``; the
    moment it was killed (wall clock)."""
    proc = _child(tmp_path, code, *args)
    _held(tmp_path, proc, tag)
    proc.send_signal(signal.SIGKILL)
    proc.wait(HANG)
    (tmp_path / f"{tag}.ready").unlink()
    return time.time()


@pytest.mark.parametrize("where", ["bfs", "written", "publish"])
def test_a_build_killed_leaves_nothing_taken_for_a_table_and_builds_again(tmp_path, where):
    from pdb_builder.storage import database_files, open_database

    db = tmp_path / "db"
    _killed(tmp_path, BUILD, str(db), where)
    assert not database_files(db)  # nothing published
    left = [p for p in db.iterdir() if p.name.endswith(".tmp")]
    assert len(left) == 1  # the killed build's temporary file, hidden
    r = _slidepdb("inspect", "--db-dir", str(db))
    assert r.returncode == 0 and "left unfinished by process" in r.stderr and "never read" in r.stderr, r.stderr
    assert _slidepdb("verify", "--db-dir", str(db)).returncode == 0
    r = CliRunner().invoke(main, ["build", "3x3", "--goal", "devquiz", "--partition", "4-4", "--db-dir", str(db)])
    assert r.exit_code == 0 and " built " in r.output, r.output
    (table,) = database_files(db)
    open_database(table, verify=True)
    assert sorted(p.name for p in db.iterdir()) == [table.name]  # the temporary file gone with it
    assert _slidepdb("verify", str(table)).returncode == 0


JOURNALLED = """
from solver.run.files import RunFiles
def journalled():
    return sum('"index"' in line for line in RunFiles(sys.argv[2]).journal.read_text().splitlines())
def told(out):  # (told after the board is journalled)
    if journalled() >= at:
        HOLD("kill")
"""

BATCH = (
    JOURNALLED
    + """
from pdb_builder.formats import read_file
from solver.run.batch import run_batch
at = int(sys.argv[3])
run_batch(read_file(sys.argv[1]).records, out_path=sys.argv[2], use_db=False, workers=1, on_outcome=told,
          resume=sys.argv[4] == "resume")
"""
)


def _journalled(out) -> dict[int, dict]:
    lines = (json.loads(x) for x in RunFiles(out).journal.read_text().splitlines() if x.strip())
    return {d["index"]: d for d in lines if "index" in d}


@pytest.mark.parametrize("at", [1, 3])
def test_a_batch_and_its_resume_killed_lose_no_answer_and_solve_none_twice(tmp_path, at):
    boards, out = _boards(tmp_path, 6), tmp_path / "ans.txt"
    _killed(tmp_path, BATCH, str(boards), str(out), str(at), "first")
    first = _journalled(out)
    assert len(first) == at
    _killed(tmp_path, BATCH, str(boards), str(out), str(at + 1), "resume")  # the resume killed a board later
    second = _journalled(out)
    assert len(second) == at + 1 and all(second[i] == d for i, d in first.items())  # none solved again
    r = _slidepdb("solve", str(boards), "--out", str(out), "--no-db", "--resume", "--json", "--workers", "1")
    assert r.returncode == 0, r.stderr
    assert f"{at + 1} from an earlier run" in r.stdout + r.stderr
    ended = {d["index"]: d["ended"] for d in map(json.loads, r.stdout.splitlines()) if d.get("index")}
    assert all(ended[i] == d["ended"] for i, d in second.items())  # each journalled board kept as it was
    _all_answered(boards, out)


RUN = (
    JOURNALLED
    + """
from pdb_builder.formats import read_file
from solver.run.pipeline import run_pipeline
at = int(sys.argv[4])
run_pipeline(read_file(sys.argv[1]).records, sys.argv[2], db_dir=sys.argv[3], budget=None, workers=1,
             on_outcome=told, resume=sys.argv[5] == "resume")
"""
)


def test_a_run_killed_while_it_solves_and_while_it_resumes_loses_nothing(tmp_path):
    """``slidepdb run`` (its wall-free databases built first) killed after two boards,
    its resume killed after one more: a third sitting ends the run, every board answered,
    every table in the folder verifying, and the journalled boards not solved again."""
    from pdb_builder.storage import database_files, open_database

    boards, out, db = _boards(tmp_path, 6), tmp_path / "ans.txt", tmp_path / "db"
    _killed(tmp_path, RUN, str(boards), str(out), str(db), "2", "first")
    _killed(tmp_path, RUN, str(boards), str(out), str(db), "3", "resume")
    before = _journalled(out)
    assert len(before) >= 3
    r = _slidepdb("run", str(boards), "--out", str(out), "--db-dir", str(db), "--resume", "--budget", "none")
    assert r.returncode == 0, r.stderr
    _all_answered(boards, out)
    after = _journalled(out)
    assert all(after[i] == d for i, d in before.items())
    assert len(RunFiles(out).sittings.read_text().split("\n")) >= 3
    for table in database_files(db):
        open_database(table, verify=True)
