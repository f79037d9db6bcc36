"""What a new user meets around their answers and their input: a resume never loses an
answer (another input is refused, naming the first board that differs and the two ways on;
an answer file is never replaced by one with fewer answers for the same boards); a finished
command run again says what to type; and the rough edges of reading files, building and
reporting: each one line, the exit code the table implies."""

import errno
import json

from click.testing import CliRunner

from pdb_builder.board import Board, Shape
from pdb_builder.formats import read_file
from pdb_builder.moves import check_moves
from solver.cli import main
from solver.run.batch import run_batch
from solver.run.files import RunFiles
from solver.run.journal import input_key

from .conftest import flip_bit, walk_cells


def run(*args, **kw):
    return CliRunner().invoke(main, [str(a) for a in args], **kw)


def one_line(r, code):
    assert r.exit_code == code, r.output
    assert "Traceback" not in r.output and "internal error" not in r.output
    errors = [line for line in r.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, r.output
    return errors[0]


def problem_file(path, seeds, limits="300 300 300 300"):
    """A DevQuiz problem file of 3x3 boards, each a seeded walk from the goal."""
    shape = Shape.devquiz(3, 3)
    boards = [str(Board(shape, tuple(walk_cells(shape, 30, s)))) for s in seeds]
    path.write_text("\n".join([limits, str(len(boards)), *boards]) + "\n")
    return path


def answers(path):
    return path.read_text().split("\n")[:-1]


def test_a_resume_with_another_input_is_refused_and_every_answer_stays(tmp_path):
    a, out, db = problem_file(tmp_path / "a.txt", [1, 2, 3]), tmp_path / "ans.txt", tmp_path / "db"
    args = ["--out", out, "--db-dir", db, "--workers", "1", "--memory-limit", "64M"]
    first = run("run", a, *args)
    assert first.exit_code == 0, first.output
    assert "summed (builds run side by side)" in first.output  # the builds' seconds say what they are
    kept = out.read_text()
    assert all(answers(out))
    journal = RunFiles(out).journal
    assert json.loads(journal.read_text().splitlines()[0]) == input_key(read_file(str(a)).records)

    # the same command again: one line saying what to type, either way on
    line = one_line(run("run", a, *args), 2)
    assert f"type: slidepdb run {a} --out {out}" in line and "--resume" in line and "--fresh" in line

    # the same file name with new contents, then another file with fewer boards: refused, nothing written
    problem_file(a, [1, 5, 3])
    line = one_line(run("run", a, *args, "--resume"), 2)
    assert "written for another input" in line and "line 4 was" in line and "--fresh" in line
    b = problem_file(tmp_path / "b.txt", [7, 8])
    line = one_line(run("run", b, *args, "--resume"), 2)
    assert "written for another input" in line and "new --out" in line
    assert out.read_text() == kept
    assert "earlier sittings" not in run("run", b, *args, "--fresh").output  # a fresh run counts none of a's
    assert len(answers(out)) == 2
    assert one_line(run("run", b, *args, "--resume", "--fresh"), 2)


def test_an_old_journal_of_another_input_is_refused_too(tmp_path):
    """A journal of the three-file form (no first line naming its input) still resumes;
    one whose boards are not the input's is refused by the boards on its lines."""
    recs = read_file(str(problem_file(tmp_path / "a.txt", [1, 2]))).records
    journal = tmp_path / "j.jsonl"
    first = run_batch(recs, use_db=False, journal=journal, workers=1)
    lines = journal.read_text().splitlines()[1:]  # as an earlier version wrote it
    journal.write_text("\n".join(lines) + "\n")
    assert run_batch(recs, use_db=False, journal=journal, resume=True, workers=1).resumed == len(first.outcomes)
    other = read_file(str(problem_file(tmp_path / "b.txt", [1, 9]))).records
    r = run("solve", tmp_path / "b.txt", "--no-db", "--out", tmp_path / "x.txt", "--resume")
    assert r.exit_code == 0  # no journal beside x.txt: nothing to resume, nothing refused
    try:
        run_batch(other, use_db=False, journal=journal, resume=True, workers=1)
    except Exception as exc:  # noqa: BLE001 - the refusal's type and words are checked below
        assert type(exc).__name__ == "BoardError" and "line 4 was" in str(exc)
    else:
        raise AssertionError("a journal of other boards was resumed")


def test_an_answer_file_never_loses_answers_to_a_later_run_of_the_same_boards(tmp_path):
    a, out = problem_file(tmp_path / "a.txt", [1, 2, 3]), tmp_path / "ans.txt"
    assert run("solve", a, "--no-db", "--out", out, "--workers", "1").exit_code == 0
    kept = answers(out)
    r = run("solve", a, "--no-db", "--out", out, "--workers", "1", "--node-limit", "1", "--no-fallback")
    assert r.exit_code == 0, r.output  # every board has its answer, from the file
    assert answers(out) == kept and "kept 3 answers it already held" in r.output
    recs = read_file(str(a)).records
    assert all(check_moves(rec.board, m).ok for rec, m in zip(recs, kept))
    # --fresh discards them, and says so
    r = run("solve", a, "--no-db", "--out", out, "--workers", "1", "--node-limit", "1", "--no-fallback", "--fresh")
    assert r.exit_code == 4 and "--fresh: discarded" in r.output and "ans.txt (3 answers)" in r.output
    assert answers(out) == ["", "", ""]


def test_run_reads_standard_input(tmp_path):
    text = problem_file(tmp_path / "a.txt", [1, 2]).read_text()
    out = tmp_path / "ans.txt"
    r = run(
        "run", "-", "--out", out, "--db-dir", tmp_path / "db", "--workers", "1", "--memory-limit", "64M", input=text
    )
    assert r.exit_code == 0, r.output
    assert len([m for m in answers(out) if m]) == 2


def test_a_count_line_that_is_not_a_number_is_the_fault_named(tmp_path):
    f = tmp_path / "p.txt"
    f.write_text("300 300 300 300\nabc\n3,3,123456708\n")
    assert f"{f}:2: 'abc' is not a count" in one_line(run("check", f), 2)
    f.write_text("300 300 300 300\n3,3,123456708\n")
    assert f"{f}:2: the count line is missing" in one_line(run("check", f), 2)


def test_a_size_no_machine_can_build_tables_for_says_so(tmp_path):
    f = tmp_path / "b.txt"
    f.write_text(" ".join("=" if i in (10, 20, 30) else str(i) for i in range(49)) + "\n")
    line = one_line(run("build", f, "--db-dir", tmp_path / "db"), 2)
    assert "no database of it can be built" in line and "--no-db" in line and "raise --memory-limit" not in line


def test_a_full_disk_during_a_build_is_one_line_and_leaves_no_file(tmp_path, monkeypatch):
    import pdb_builder.make.writing as writing

    def full(*args, **kw):
        raise OSError(errno.ENOSPC, "Can't synchronously write data (error message = 'No space left on device')")

    monkeypatch.setattr(writing, "dataset", full)
    db = tmp_path / "db"
    line = one_line(run("build", "3x3", "--goal", "devquiz", "--db-dir", db), 6)
    assert f"{db}: no room on its disk for 3x3-devquiz.pdb.8.h5 (it needs about" in line
    assert list(db.iterdir()) == []


def test_a_damaged_table_left_out_by_a_run_is_said_once(tmp_path):
    db, out = tmp_path / "db", tmp_path / "ans.txt"
    assert run("build", "3x3", "--goal", "devquiz", "--partition", "4-4", "--db-dir", db).exit_code == 0
    (path,) = db.glob("*.h5")
    flip_bit(path, "tables/0", 101, 0x04)
    a = problem_file(tmp_path / "a.txt", [1, 2, 3])
    r = run("run", a, "--out", out, "--db-dir", db, "--workers", "1", "--no-build")
    assert r.exit_code == 0, r.output
    said = [line for line in r.output.splitlines() if line.startswith("warning:") and path.name in line]
    assert len(said) == 1 and "left out" in said[0] and "boards solved without it" in said[0]


def test_answers_the_move_limits_keep_out_of_the_file_exit_4(tmp_path):
    a, out = problem_file(tmp_path / "a.txt", [1, 2, 3], limits="10 10 10 10"), tmp_path / "ans.txt"
    r = run("solve", a, "--no-db", "--out", out, "--workers", "1")
    assert r.exit_code == 4, r.output
    assert "to stay within the move limits" in r.output and "exit 4" in r.output
    assert "" in answers(out)


def test_suggest_says_what_each_build_costs(tmp_path):
    f = tmp_path / "p.txt"
    f.write_text("5,5,123456789ABCDEFGHIJKLMNO0\n")
    r = run("inspect", "--problems", f, "--suggest", "--db-dir", tmp_path / "db")
    line = next(line for line in r.output.splitlines() if line.startswith("slidepdb build 5x5"))
    assert "--memory-limit" not in line and "6-6-6-6, 510,048,000 entries" in line and "on disk" in line


def test_the_small_problem_file_gives_the_command_the_readme_runs():
    """The command in scripts/problems-small.txt's comment is the README's, which
    tests/test_readme.py runs as written (seconds, small tables)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    comment = (root / "scripts" / "problems-small.txt").read_text().split("`")[1]
    assert comment.startswith("slidepdb run scripts/problems-small.txt") and "--memory-limit 64M" in comment
    assert f"$ {comment}\n" in (root / "README.md").read_text()
