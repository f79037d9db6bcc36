import json
import os
import signal
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from pdb_builder.board import Shape
from pdb_builder.errors import EXIT_UNSOLVABLE
from pdb_builder.formats import read_board_arg
from pdb_builder.moves import check_moves
from solver.cli import main
from solver.fallback.ladder import FALLBACK_TIMES
from solver.tuning import tuning

from .test_inspect import walk


def run(*args, input=None):
    return CliRunner().invoke(main, list(args), input=input)


def test_help_lists_commands():
    r = run("--help")
    assert r.exit_code == 0 and "check" in r.output and "solve" in r.output and "Exit codes" in r.output
    assert run("--version").output.startswith("slidepdb")
    from pdb_builder.patterns import GROW_ORDERS

    build_help = " ".join(run("build", "--help").output.split())  # click wraps the text
    assert f"from that order: {', '.join(GROW_ORDERS)})" in build_help  # the help names every grow order


def test_exit_0_valid_and_solved():
    assert run("check", "3,3,123456708").exit_code == 0
    r = run("solve", "--json", "3,3,1=3456708")
    rec = json.loads(r.stdout)
    assert r.exit_code == 0 and rec["status"] == "solved" and rec["optimal"] and rec["length"] == 1
    board = read_board_arg(rec["board"]).records[0].board
    assert check_moves(board, rec["moves"]).ok


def test_check_simulates_an_answer_file_line_by_line(tmp_path):
    """``check FILE ANSWERS``: each line of the answer file simulated on its board (an
    empty line: the board only validated); an illegal line exits 5 naming the board's
    line; more answer lines than boards: one line, exit 2."""
    boards = tmp_path / "p.txt"
    boards.write_text("99 99 99 99\n3\n3,3,123456708\n3,3,123456780\n3,3,123456078\n")
    good, bad, long = (tmp_path / n for n in ("good.txt", "bad.txt", "long.txt"))
    good.write_text("R\n\nRR\n")
    bad.write_text("R\n\nLL\n")
    long.write_text("R\n\nRR\nR\n")
    r = run("check", "--json", str(boards), str(good))
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert r.exit_code == 0 and [row.get("length") for row in rows] == [1, None, 2]
    r = run("check", str(boards), str(bad))
    assert r.exit_code == 5 and "p.txt:5: move 1 'L'" in r.output
    r = run("check", str(boards), str(long))
    assert r.exit_code == 2 and r.output.strip().count("\n") == 0 and "4 answer lines for 3 boards" in r.output


def test_exit_2_bad_input_one_line_no_traceback():
    r = run("check", "3,3,12345678")
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert r.output.strip().count("\n") == 0 and "needs 9" in r.output
    assert run("check", "1 2 3 0", "--size", "9by9").exit_code == 2


def test_exit_3_unsolvable():
    r = run("check", "--json", "3,3,213456780")
    assert r.exit_code == 3 and json.loads(r.stdout)["status"] == "unsolvable"
    assert run("solve", "3,3,213456780").exit_code == 3


def test_exit_4_limit():
    board = "14 13 15 7 11 12 9 5 6 0 2 1 4 8 10 3"
    r = run("solve", "--json", "--node-limit", "1000", "--no-fallback", board)
    rec = json.loads(r.stdout)
    assert r.exit_code == 4 and rec["status"] == "limit" and rec["optimal"] is False and rec["moves"] is None


def test_exit_5_bad_moves():
    r = run("check", "--json", "3,3,123456708", "RR")
    rec = json.loads(r.stdout)
    assert r.exit_code == 5 and rec["status"] == "illegal" and rec["move_index"] == 1
    assert run("check", "3,3,123456708", "L").exit_code == 5  # legal, but not the goal
    assert run("check", "3,3,123456708", "R").exit_code == 0


def test_file_highest_code_wins_and_every_board_processed(tmp_path):
    f = tmp_path / "p.txt"
    f.write_text("10 10 10 10\n4\n3,3,123456708\n3,3,12345678\n3,3,213456780\n3,3,123456780\n")
    r = run("check", "--json", str(f))
    recs = [json.loads(x) for x in r.stdout.splitlines()]
    assert [x["index"] for x in recs] == [3, 4, 5, 6]
    assert [x["status"] for x in recs] == ["valid", "invalid", "unsolvable", "valid"]
    assert r.exit_code == 3


def test_solve_file_writes_answer_file(tmp_path):
    f = tmp_path / "p.txt"
    f.write_text("10 10 10 10\n3\n3,3,123456708\n3,3,213456780\n3,3,123456078\n")
    out = tmp_path / "answers.txt"
    r = run("solve", str(f), "--out", str(out))
    assert r.exit_code == 3
    assert out.read_text().split("\n") == ["R", "", "RR", ""]


def test_stdin_numeric_with_size():
    r = run("check", "--json", "--size", "3x2", "-", input="1 2 0 3 4 5\n")
    assert r.exit_code == 0 and json.loads(r.stdout)["status"] == "valid"


def test_python_dash_m_solver():
    out = subprocess.run([sys.executable, "-m", "solver", "check", "3,3,123456780"], capture_output=True, text=True)
    assert out.returncode == 0 and "solvable" in out.stdout


def test_the_quick_exit_loses_nothing(tmp_path):
    """The command's exit skips the interpreter's teardown (solver.cli.entry): every
    line of stdout through a pipe, the answer file, the report and the exit codes are
    still all there."""
    boards = ["3,3,123456708", "3,3,123405786", "3,3,213456780", "3,3,123456708"]
    problems = tmp_path / "p.txt"
    problems.write_text("".join(b + "\n" for b in boards))
    out, report = tmp_path / "a.txt", tmp_path / "r.csv"
    cmd = [sys.executable, "-m", "solver", "solve", "--no-db", "--json", str(problems)]
    r = subprocess.run([*cmd, "--out", str(out), "--report", str(report)], capture_output=True, text=True)
    recs = sorted((json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")), key=lambda x: x["index"])
    assert r.returncode == EXIT_UNSOLVABLE
    assert [x["status"] for x in recs] == ["solved", "solved", "unsolvable", "solved"]
    assert out.read_text().split("\n") == ["R", "RD", "", "R", ""]
    assert len(report.read_text().splitlines()) == 5
    bad = subprocess.run(
        [sys.executable, "-m", "solver", "solve", str(tmp_path / "nofile.txt")],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and bad.stdout == "" and bad.stderr.count("\n") == 1 and "nofile.txt" in bad.stderr


def test_fallback_gives_a_valid_unproven_answer():
    board = "14 13 15 7 11 12 9 5 6 0 2 1 4 8 10 3"  # Korf #1, optimal 57
    r = run("solve", "--json", "--node-limit", "20000", "--no-db", board)
    rec = json.loads(r.stdout)
    assert r.exit_code == 0 and rec["status"] == "solved" and rec["optimal"] is False
    assert rec["fallback"].startswith(("beam", "weighted")) and rec["lower_bound"] <= 57 <= rec["length"]
    assert check_moves(read_board_arg(board).records[0].board, rec["moves"]).ok


def test_weighted_fallback_when_no_beam_answers(monkeypatch, tune):
    tune(beam_widths=())
    board = "14 13 15 7 11 12 9 5 6 0 2 1 4 8 10 3"  # Korf #1, optimal 57
    rec = json.loads(run("solve", "--json", "--node-limit", "20000", "--no-db", board).stdout)
    assert rec["status"] == "solved" and rec["fallback"].startswith("weighted IDA*")
    weight = float(rec["fallback"].split(",")[0].split()[-1])  # "weighted IDA* 1.5[, polished]"
    assert weight > 1 and rec["lower_bound"] <= 57 <= rec["length"] <= weight * 57  # weighted IDA*'s bound
    assert check_moves(read_board_arg(board).records[0].board, rec["moves"]).ok


def test_staged_fallback_when_every_other_search_fails(monkeypatch, tune):
    tune(beam_widths=())
    tune(fallback_weights=())
    monkeypatch.setattr("solver.fallback.ladder.layout_searcher", lambda *a, **k: None)
    board = walk(Shape.devquiz(5, 5, [6, 13]), steps=3000, seed=3)  # too far for Manhattan alone
    # a node limit, not seconds: the staged search needs about 0.7M nodes here, on any machine's load
    rec = json.loads(run("solve", "--json", "--node-limit", "2000000", "--no-db", board).stdout)
    assert rec["status"] == "solved" and rec["fallback"].startswith("staged") and rec["optimal"] is False
    assert check_moves(read_board_arg(board).records[0].board, rec["moves"]).ok


def test_every_search_of_a_board_counts_against_its_node_limit():
    board = walk(Shape.devquiz(5, 5), steps=3000, seed=5)  # far from the goal: Manhattan alone is slow
    r = run("solve", "--json", "--node-limit", "300000", "--no-db", board)
    rec = json.loads(r.stdout)
    # the optimal search's budget, FALLBACK_TIMES more for beam, weighted, staged and polishing,
    # and at most one beam level (4 children for each of the first beam's states) over
    assert rec["nodes"] <= (1 + FALLBACK_TIMES) * 300000 + 4 * tuning().beam_widths[0]
    assert rec["status"] in ("solved", "limit") and rec["optimal"] is False


@pytest.mark.slow
def test_sigterm_stops_a_batch_and_keeps_finished_answers(tmp_path):
    """kill -TERM (how batch schedulers stop jobs; background jobs ignore SIGINT) stops like Ctrl-C."""
    boards = ["3,3,123456708", "3,3,123405786"] + [walk(Shape.devquiz(5, 5), steps=2000, seed=s) for s in range(30)]
    f = tmp_path / "p.txt"
    f.write_text("\n".join(boards) + "\n")
    out = tmp_path / "a.txt"
    journal = tmp_path / "a.txt.progress.jsonl"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "solver",
            "solve",
            str(f),
            "--out",
            str(out),
            "--no-db",
            "--workers",
            "2",
            "--no-fallback",
            "--db-dir",
            str(tmp_path / "none"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.time() + 60
        while time.time() < deadline and not (journal.exists() and len(journal.read_text().splitlines()) >= 3):
            time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)  # (3 lines: the input's, then two boards')
        _, err = proc.communicate(timeout=30)  # the workers, on boards with no limit, are ended, not awaited
    finally:
        if proc.poll() is None:  # a failed stop must not leave searches running after the test
            subprocess.run(["pkill", "-9", "-P", str(proc.pid)], check=False)
            proc.kill()
    assert proc.returncode == 130 and "rerun with --resume" in err
    lines = out.read_text().split("\n")[:-1]
    assert len(lines) == len(boards) and lines[0] == "R" and lines[1]
    assert journal.exists()


@pytest.mark.slow
@pytest.mark.parametrize("attempt", range(3))
def test_two_interrupts_at_once_still_write_the_finished_answers(tmp_path, attempt):
    """``timeout -s INT`` signals the process and then its group: two SIGINTs at once.
    The second must not cut short the writing of the answer file."""
    boards = ["3,3,123456708", "3,3,123405786"] + [walk(Shape.devquiz(5, 5), steps=2000, seed=s) for s in range(30)]
    f = tmp_path / "p.txt"
    f.write_text("\n".join(boards) + "\n")
    out, journal = tmp_path / "a.txt", tmp_path / "a.txt.progress.jsonl"
    cmd = [sys.executable, "-m", "solver", "solve", str(f), "--out", str(out), "--no-db", "--workers", "2"]
    proc = subprocess.Popen(
        [*cmd, "--no-fallback", "--db-dir", str(tmp_path / "none")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as under `timeout`
        # Ctrl-C as on a terminal, even where this suite runs as a background job of a
        # non-interactive shell (whose children inherit SIGINT ignored, as the CLI respects)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.time() + 60
        while time.time() < deadline and not (journal.exists() and len(journal.read_text().splitlines()) >= 3):
            time.sleep(0.1)
        os.kill(proc.pid, signal.SIGINT)
        time.sleep(0.002 * attempt)
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            subprocess.run(["pkill", "-9", "-P", str(proc.pid)], check=False)
            proc.kill()
    assert proc.returncode == 130 and "rerun with --resume" in err, err
    lines = out.read_text().split("\n")[:-1]
    assert len(lines) == len(boards) and lines[0] == "R" and lines[1]


@pytest.mark.slow
def test_sigterm_during_a_build_in_a_worker_then_resume(tmp_path):
    """``run --workers 2`` killed while a worker builds a table: no database file but the
    finished ones; the resumed run builds it again and answers every board."""
    from pdb_builder.storage import database_files, open_database

    boards = [walk(Shape.devquiz(3, 3), seed=s) for s in range(4)] + [
        walk(Shape.devquiz(4, 4), steps=60, seed=s) for s in range(4)
    ]
    f = tmp_path / "p.txt"
    f.write_text("\n".join(["99 99 99 99", str(len(boards)), *boards]) + "\n")
    out, db, err = tmp_path / "a.txt", tmp_path / "db", tmp_path / "err.txt"
    cmd = [sys.executable, "-m", "solver", "run", str(f), "--out", str(out), "--db-dir", str(db)]
    cmd += ["--memory-limit", "64M", "--workers", "2", "--budget", "none"]
    with err.open("w") as fh:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=fh)
    try:
        deadline = time.time() + 60
        while time.time() < deadline and "building wall-free database 4x4" not in err.read_text():
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)  # the build has just been handed to a worker
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            subprocess.run(["pkill", "-9", "-P", str(proc.pid)], check=False)
            proc.kill()
    assert proc.returncode == 130 and "rerun with --resume" in err.read_text()
    assert "4x4-devquiz 5-5-5: built" not in err.read_text()
    assert not any(p.name.startswith("4x4") for p in database_files(db))  # the killed build published nothing
    r = subprocess.run([*cmd, "--resume"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    files = database_files(db)
    assert {p.name.split(".")[0] for p in files} == {"3x3-devquiz", "4x4-devquiz"}
    assert all(open_database(p, verify=True) for p in files) and not list(db.glob(".*.tmp"))
    answers = out.read_text().split("\n")[:-1]
    assert all(check_moves(read_board_arg(b).records[0].board, m).ok for b, m in zip(boards, answers))


def test_progress_line_on_a_terminal_only(monkeypatch):
    import io

    from solver.cli.progress import Progress
    from solver.outcome import Outcome

    monkeypatch.setenv("SLIDEPDB_PROGRESS_AFTER", "0")  # as if the boards took long
    term = io.StringIO()
    bar = Progress(4, term, enabled=True)
    for i, optimal in enumerate((True, False, True)):
        bar.update(Outcome(i, "b", "solved", None, optimal=optimal))
    bar.bar.refresh()
    last = term.getvalue().split("\r")[-1]
    assert last.startswith("3/4 boards, 2 proven") and "elapsed" in last and "left" in last
    bar.close()
    assert term.getvalue().split("\r")[-1].strip() == ""  # the bar leaves no line behind
    piped = io.StringIO()  # not a terminal: nothing but the per-board lines
    bar = Progress(4, piped)
    bar.update(Outcome(0, "b", "solved", None, optimal=True))
    assert piped.getvalue() == ""


def test_one_board_shows_its_search_live_on_a_terminal(monkeypatch, tune):
    """One hard board: a live line of the threshold, nodes, rate and time on a
    terminal, none in a pipe or with -q; the searcher tells it after each slice."""
    import solver.cli.progress as progress
    from solver.search.heuristic import manhattan_heuristic
    from solver.search.searcher import Searcher

    board = read_board_arg("8 6 7 2 5 4 3 0 1", goal="korf").records[0].board  # 27 moves (Korf goal)
    tune(slice_nodes=500)  # many slices on a small board
    seen = []

    class Note:
        def search(self, threshold, nodes):
            seen.append((threshold, nodes))

    s = Searcher(manhattan_heuristic(board.shape))
    s.python_first, s.progress = False, Note()
    assert s.solve(board).length == 27
    assert len(seen) > 3 and [n for _, n in seen] == sorted(n for _, n in seen) and seen[-1][0] == 27
    piped = run("solve", "--no-db", "--threads", "1", "8 6 7 2 5 4 3 0 1")
    assert piped.exit_code == 0 and "threshold" not in piped.output
    monkeypatch.setattr(progress, "on_terminal", lambda stream=None: True)
    assert "threshold" not in run("solve", "--no-db", "--threads", "1", "8 6 7 2 5 4 3 0 1").output  # quick: quiet
    monkeypatch.setenv("SLIDEPDB_PROGRESS_AFTER", "0")  # as if it took long
    term = run("solve", "--no-db", "--threads", "1", "8 6 7 2 5 4 3 0 1")
    assert term.exit_code == 0 and "optimal search, threshold " in term.output and " nodes/s" in term.output
    assert "threshold" not in run("-q", "solve", "--no-db", "--threads", "1", "8 6 7 2 5 4 3 0 1").output


def test_build_shows_a_bar_per_pattern_on_a_terminal_and_layers_at_v(tmp_path, monkeypatch):
    import pdb_builder.cli.build as builder_cli

    monkeypatch.setattr(builder_cli, "on_terminal", lambda stream=None: True)
    monkeypatch.setenv("SLIDEPDB_PROGRESS_AFTER", "0")  # as if the patterns took long
    r = run("build", "3x3", "--goal", "korf", "--partition", "4-4", "--db-dir", str(tmp_path / "a"))
    assert r.exit_code == 0 and "3x3-korf 4-4 pattern 1/2" in r.output and " depth " not in r.output
    r = run("-v", "build", "3x3", "--goal", "korf", "--partition", "4-4", "--db-dir", str(tmp_path / "b"))
    assert r.exit_code == 0 and "pattern 1 depth" in r.output and "4-4 pattern 1/2" not in r.output
