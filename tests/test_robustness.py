"""The edges a new user meets first: bad input, limits, damaged files, stray temporary files.

Bad input is one line on stderr, exit 2, no traceback; a limit bounds a board's whole
work; a damaged database is an error naming the file, never a silently different table.
"""

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import h5py
import pytest
from click.testing import CliRunner

from pdb_builder import storage
from pdb_builder.atomic import atomic_path
from pdb_builder.errors import DatabaseError
from pdb_builder.formats import read_board_arg
from solver.cli import main
from solver.fallback.ladder import FALLBACK_TIMES
from solver.search.searcher import ida_star

FIXTURE = Path(__file__).parent / "data" / "3x3-devquiz.pdb.3-3-2.v1.h5"


def run(*args):
    return CliRunner().invoke(main, list(args))


def one_line_error(r, code=2):
    """The error's one line (a bad option value also gets click's usage lines above it)."""
    assert r.exit_code == code, r.output
    assert "Traceback" not in r.output and "internal error" not in r.output
    lines = [line for line in r.output.strip().splitlines() if line and not line.startswith(("Usage:", "Try "))]
    assert len(lines) == 1, r.output
    return lines[0]


@pytest.mark.parametrize("command", ["check", "solve"])
def test_a_board_argument_that_is_neither_file_nor_board_names_both_readings(command, tmp_path):
    for arg in (str(tmp_path / "nonexistent.txt"), "hello", str(tmp_path)):
        out = one_line_error(run(command, "--no-db", arg) if command == "solve" else run(command, arg))
        assert "not a file" in out and "not a board" in out and arg in out


def test_files_that_hold_no_boards(tmp_path):
    binary = tmp_path / "b.dat"
    binary.write_bytes(b"3,3,123456708\n\xc1\xff\x00junk")
    out = one_line_error(run("check", str(binary)))
    assert f"{binary}:2:" in out and "not a text file" in out
    assert run("inspect", "--problems", str(binary)).exit_code == 2
    empty = tmp_path / "e.txt"
    empty.write_text("\n# nothing here\n")
    assert "no boards" in one_line_error(run("check", str(empty)))
    word = tmp_path / "w.txt"
    word.write_text("72187 81749 72303 81778\nmany\nhello\n")  # a limits line, a count line that is a word
    r = run("check", str(word))
    assert r.exit_code == 2 and "internal error" not in r.output and f"{word}:3:" in r.output


def test_output_paths_are_checked_before_any_work(tmp_path):
    t0 = time.perf_counter()
    out = one_line_error(run("solve", "--no-db", "--out", str(tmp_path / "nodir" / "a.txt"), "3,3,123456708"))
    assert "does not exist" in out
    (tmp_path / "ro").mkdir()
    os.chmod(tmp_path / "ro", 0o500)
    try:
        if not os.access(tmp_path / "ro", os.W_OK):  # (root may write anywhere)
            r = run("solve", "--no-db", "--report", str(tmp_path / "ro" / "r.csv"), "3,3,123456708")
            assert "cannot write" in one_line_error(r)
    finally:
        os.chmod(tmp_path / "ro", 0o700)
    assert "cannot write" in one_line_error(run("solve", "--no-db", "--report", "/proc/nope.csv", "3,3,123456708"))
    assert time.perf_counter() - t0 < 10  # refused, not solved first


BOARDS = "3,3,123456708\n3,3,123456078\n"


@pytest.mark.parametrize(
    "args",
    [
        ["solve", "--no-db", "{same}", "--out", "{same}"],
        ["solve", "--no-db", "{same}", "--report", "{same}"],
        ["solve", "--no-db", "{boards}", "--out", "{same}", "--report", "{same}"],
        ["solve", "--no-db", "{boards}", "--out", "{same}", "--compare", "{same}"],
        ["solve", "--no-db", "{boards}", "--report", "{same}", "--compare", "{same}"],
        ["solve", "--no-db", "{boards}", "--out", "{other}", "--report", "{other}.progress.jsonl"],
        ["solve", "--db-dir", "{db}", "{boards}", "--out", "{db}/{fixture}"],
        ["solve", "--no-db", "{boards}", "--report", "{db}/{fixture}"],
        ["run", "{same}", "--out", "{same}", "--no-build", "--db-dir", "{db}"],
        ["run", "{boards}", "--out", "{same}", "--report", "{same}", "--no-build", "--db-dir", "{db}"],
        ["run", "{boards}", "--out", "{other}", "--plot", "{pic}", "--compare", "{pic}", "--no-build"],
    ],
)
def test_no_output_overwrites_an_input_another_output_or_a_database(tmp_path, args):
    """Every pairing is refused before any work, exit 2, and every file stays as it was."""
    same, boards, db = tmp_path / "same.txt", tmp_path / "boards.txt", tmp_path / "db"
    pic = tmp_path / "pic.png"  # a --compare file with a name a plot could have
    db.mkdir()
    shutil.copy(FIXTURE, db / FIXTURE.name)
    for f in (same, boards, pic):
        f.write_text(BOARDS)
    before = {p: p.read_bytes() for p in (same, boards, pic, db / FIXTURE.name)}
    words = [
        a.format(same=same, boards=boards, pic=pic, other=tmp_path / "other.txt", db=db, fixture=FIXTURE.name)
        for a in args
    ]
    line = one_line_error(run(*words))
    assert "refusing to overwrite" in line
    assert {p: p.read_bytes() for p in before} == before
    assert not (tmp_path / "other.txt").exists()


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "0", "soon"])
def test_limits_must_be_positive_finite_seconds(value):
    r = run("solve", "--no-db", "--time-limit", value, "3,3,123456708")
    assert r.exit_code == 2 and "--time-limit" in r.output


def test_messages_say_what_the_user_wrote():
    # a numeric board names tile 16, not its DevQuiz label G
    out = one_line_error(run("check", " ".join(map(str, [0] + list(range(1, 15)) + [16]))))
    assert "tile 16" in out
    assert "1 move reaches the goal" in run("check", "3,3,123456708", "R").output
    r = run("check", "3,3,123456780", "L")
    assert r.exit_code == 5 and "1 legal move ends short of the goal" in r.output
    out = one_line_error(run("build", "7x7", "--db-dir", "/nonexistent"))
    assert "--partition" not in out and "49 free cells" in out and "without databases" in out


def test_compare_names_the_illegal_letters(tmp_path):
    theirs = tmp_path / "theirs.txt"
    theirs.write_text("XYZ\n")
    r = run("solve", "--no-db", "--compare", str(theirs), "3,3,123456708")
    assert "'X': unknown letter" in r.output


def test_missing_db_dir_warns_and_empty_folder_verifies_like_inspect(tmp_path):
    r = run("solve", "--db-dir", str(tmp_path / "none"), "3,3,123456708")
    assert r.exit_code == 0 and "does not exist" in r.output
    assert (
        run("verify", "--db-dir", str(tmp_path)).exit_code == run("inspect", "--db-dir", str(tmp_path)).exit_code == 0
    )


def test_a_missing_db_dir_from_the_environment_or_the_api_warns_too(tmp_path, monkeypatch):
    from solver import solve

    none = str(tmp_path / "none")
    monkeypatch.setenv("SLIDEPDB_DB_DIR", none)
    r = run("solve", "3,3,123456708")
    assert r.exit_code == 0 and f"{none} ($SLIDEPDB_DB_DIR) does not exist" in r.output
    monkeypatch.delenv("SLIDEPDB_DB_DIR")
    with pytest.warns(UserWarning, match="does not exist"):
        assert solve("3,3,123456708", db_dir=tmp_path / "also-none").optimal


def test_suggest_keeps_the_db_dir_and_suggests_no_build_that_must_fail(tmp_path):
    problems = tmp_path / "p.txt"
    problems.write_text("4,4,123456789ABCDEF0\n" + " ".join(map(str, [*range(1, 49), 0])) + "\n")
    r = run("inspect", "--problems", str(problems), "--suggest", "--db-dir", str(tmp_path / "my db"))
    assert f"slidepdb build 4x4 --goal devquiz --db-dir '{tmp_path / 'my db'}'" in r.output
    assert "build 7x7" not in r.output and "# 7x7 has 49 free cells" in r.output  # (the 7x7 board: 49 cells)


def test_a_closed_pipe_ends_quietly(tmp_path):
    problems = tmp_path / "p.txt"
    problems.write_text("3,3,123456708\n" * 20000)
    p = subprocess.run(
        f"{sys.executable} -m solver check {problems} | head -1",
        shell=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.stdout.count("\n") == 1 and p.stderr == ""


def test_unsolvable_board_through_the_api_returns_at_once():
    board = read_board_arg("3,3,213456780").records[0].board
    t0 = time.perf_counter()
    res = ida_star(board, time_limit=60)
    assert res.status == "unsolvable" and res.moves is None and time.perf_counter() - t0 < 5


@pytest.mark.slow
def test_a_time_limit_bounds_the_whole_board():
    """DevQuiz line 2903 without databases: optimal, beam, weighted and staged searches all
    stop on it; the board must still end within (1 + FALLBACK_TIMES) limits and a slice."""
    limit = 2.0
    run("solve", "--no-db", "--time-limit", "1", "3,3,123456708")  # compile first
    t0 = time.perf_counter()
    r = run("solve", "--json", "--no-db", "--time-limit", str(limit), "5,5,B234017==N6=KF5G=IDELMJOA")
    wall = time.perf_counter() - t0
    rec = json.loads(r.stdout.splitlines()[0])
    assert rec["status"] in ("solved", "limit")
    assert wall < (1 + FALLBACK_TIMES) * limit + 15, wall  # was several minutes: staged search had no deadline


def _copy(tmp_path):
    path = tmp_path / FIXTURE.name
    shutil.copy(FIXTURE, path)
    return path


@pytest.mark.parametrize(
    "damage",
    ["swap tiles", "tiles attribute", "partition json", "not a partition", "table size", "packed lost", "header"],
)
def test_damaged_metadata_is_an_error_naming_the_file(tmp_path, damage):
    """Attributes lie outside the checksums: a table paired with the wrong tiles would be
    read inadmissibly, so every disagreement is refused (exit 1 with the file named)."""
    path = _copy(tmp_path)
    from pdb_builder.board import Shape
    from pdb_builder.make.building import build_pdb
    from pdb_builder.patterns import named_partition

    if damage == "packed lost":  # the fixture predates two-bit copies: build a file that has them
        shape = Shape.devquiz(3, 3)
        path = Path(build_pdb(shape, named_partition(shape, "4-4"), tmp_path, progress=None).path)
    with h5py.File(path, "r+") as f:
        if damage == "swap tiles":
            f.attrs["partition"] = json.dumps([[4, 5, 6], [1, 2, 3], [7, 8]])
        elif damage == "tiles attribute":
            f["tables/0"].attrs["tiles"] = [1, 2, 4]
        elif damage == "partition json":
            f.attrs["partition"] = "[[1, 2, 3], [4, 5"
        elif damage == "not a partition":
            f.attrs["partition"] = json.dumps([[1, 2, 3], [3, 5, 6], [7, 8]])
        elif damage == "table size":
            f["tables/0"].attrs["cells"] = 8
        elif damage == "packed lost":
            del f["packed/1"]
        elif damage == "header":
            del f["tables/1"]
    with pytest.raises(DatabaseError, match=str(path.name)):
        storage.open_database(path)
    r = run("verify", str(path))
    assert r.exit_code == 1 and path.name in r.output and "Traceback" not in r.output


def test_a_killed_writers_temporary_file_goes_with_the_next_write(tmp_path):
    final = tmp_path / "x.h5"
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    ).stdout.strip()
    import socket

    host = socket.gethostname().replace(".", "_").replace("-", "_")
    stale = tmp_path / f".x.h5.{host}-{dead}.abcd.tmp"
    stale.write_bytes(b"half a table")
    live = tmp_path / f".x.h5.{host}-{os.getpid()}.efgh.tmp"  # a writer still running keeps its file
    live.write_bytes(b"in progress")
    with atomic_path(final) as tmp:
        tmp.write_bytes(b"done")
    assert final.read_bytes() == b"done" and not stale.exists() and live.exists()


def _layout_boards(count: int, seed: int = 3):
    """DevQuiz lines of ``count`` distinct connected 3x3 wall layouts (one or two walls),
    each a few random moves from its goal."""
    import itertools
    import random

    from pdb_builder.formats import parse_board_text

    rng = random.Random(seed)
    lines = []
    for walls in itertools.chain(itertools.combinations(range(8), 1), itertools.combinations(range(8), 2)):
        labels = [("=" if c in walls else "123456789"[c]) for c in range(8)] + ["0"]
        board = parse_board_text("3,3," + "".join(labels))[1]
        shape = board.shape
        if shape.component(shape.goal_blank) != frozenset(shape.free_cells):
            continue
        cells, b = list(board.cells), shape.goal_blank
        for _ in range(14):
            c = rng.choice(shape.neighbours[b])
            cells[b], cells[c], b = cells[c], 0, c
        lines.append("3,3," + "".join("0" if t == 0 else "=" if t < 0 else "123456789"[t - 1] for t in cells))
        if len(lines) == count:
            break
    return lines


def test_hundreds_of_open_tables_within_a_small_open_file_limit(tmp_path):
    """A folder whose tables would need more descriptors than ``ulimit -n 64`` allows:
    coverage and a batch close what they are not using (without that, EMFILE)."""
    from pdb_builder.formats import parse_board_text
    from pdb_builder.make.building import build_pdb, default_partition

    lines = _layout_boards(30)
    db = tmp_path / "db"
    tables = 0
    for line in lines:
        shape = parse_board_text(line)[1].shape
        part = default_partition(shape, 1 << 10)  # two or three small tables a layout
        build_pdb(shape, part, db, two_bit=False)
        tables += len(part.groups)
    assert tables > 64
    problems = tmp_path / "p.txt"
    problems.write_text("1 1 1 1\n%d\n%s\n" % (len(lines), "\n".join(lines)))
    exe = str(Path(sys.executable).with_name("slidepdb"))
    for cmd in (
        [exe, "inspect", "--db-dir", str(db), "--problems", str(problems)],
        [exe, "solve", str(problems), "--db-dir", str(db), "--workers", "1", "--json"],
    ):
        r = subprocess.run(["bash", "-c", 'ulimit -n 64 && exec "$@"', "_", *cmd], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr[-2000:]
        assert "too many open files" not in r.stderr.lower() and "coverage is not counted" not in r.stderr
    outs = [json.loads(x) for x in r.stdout.splitlines()]
    assert len(outs) == len(lines) and all(o["optimal"] for o in outs)
    assert all(any(".pdb." in name for name in o["heuristic"]) for o in outs)  # its own layout's tables


def test_a_byte_order_mark_before_the_first_board_is_skipped(tmp_path):
    f = tmp_path / "bom.txt"
    f.write_bytes("\ufeff3,3,123456708\n3,3,123456078\n".encode())
    r = run("check", str(f))
    assert r.exit_code == 0, r.output
    assert r.output.count("solvable") == 2


def test_inspect_plot_into_a_missing_folder_is_refused_before_any_work(tmp_path):
    out = one_line_error(run("inspect", str(FIXTURE), "--plot", str(tmp_path / "nodir" / "h.png")))
    assert "--plot" in out and "does not exist" in out


@pytest.mark.parametrize("command", ["check", "solve", "run", "build", "inspect", "verify"])
def test_every_command_lists_every_exit_code_in_its_help(command):
    from pdb_builder.errors import EXIT_CODES

    text = run(command, "--help").output
    assert "Exit codes:" in text and "141  standard output was closed" in text  # `... | head -1`
    for code, meaning in EXIT_CODES.items():
        assert f"{code}  {meaning}" in " ".join(text.split("\n")), (code, text)


def test_counted_words_agree_with_their_count(tmp_path):
    from pdb_builder.words import plural

    assert (plural(1, "board"), plural(2, "board"), plural(1200, "proof")) == ("1 board", "2 boards", "1,200 proofs")
    r = run("-v", "solve", "--no-db", "3,3,123456708")
    assert r.exit_code == 0 and "<argument>: 1 board, format" in r.output and "1 boards" not in r.output
    f = tmp_path / "two.txt"
    f.write_text(BOARDS)
    r = run("solve", "--no-db", "--workers", "1", str(f))
    assert r.exit_code == 0 and "2/2 boards in" in r.output and "with 1 worker\n" in r.output + "\n", r.output
    assert "(s)" not in r.output


def test_workers_and_threads_past_what_can_help_are_held_and_said(tmp_path):
    from solver.search.threads import default_threads

    cores = default_threads()
    f = tmp_path / "two.txt"
    f.write_text(BOARDS)
    r = run("solve", "--no-db", "--workers", "1000", str(f))
    most = min(cores, 2)
    assert r.exit_code == 0 and f"--workers 1000: using {most} (" in r.output, r.output
    assert f"with {most} worker" in r.output
    r = run("solve", "--no-db", "--threads", "1000", "3,3,123456708")
    assert r.exit_code == 0 and f"--threads 1000: using {cores} (" in r.output, r.output


def test_a_named_partition_past_the_memory_limit_is_refused_before_any_build(tmp_path):
    t0 = time.perf_counter()
    out = one_line_error(run("build", "4x4", "--partition", "7-8", "--memory-limit", "1M", "--db-dir", str(tmp_path)))
    assert "--memory-limit" in out and "7-8 needs 1.4 GB" in out
    assert time.perf_counter() - t0 < 10 and not list(tmp_path.iterdir())


def test_every_input_is_read_before_any_work(tmp_path):
    """A binary --compare file is refused before any board is solved; a count line that
    disagrees with the boards is a warning said at once, and the boards are solved."""
    f = tmp_path / "two.txt"
    f.write_text(BOARDS)
    binary = tmp_path / "theirs.bin"
    binary.write_bytes(b"RR\x00\x01\x02\n")
    r = run("solve", "--no-db", str(f), "--compare", str(binary))
    assert "a NUL byte" in one_line_error(r) and "2/2 boards" not in r.output
    counted = tmp_path / "counted.txt"
    counted.write_text("72187 81749 72303 81778\n5\n" + BOARDS)
    r = run("solve", "--no-db", str(counted))
    assert r.exit_code == 0, r.output
    assert r.output.index("warning: ") < r.output.index("2/2 boards") and "count line says 5 boards" in r.output


def test_a_benchmark_line_whose_stated_length_is_wrong_is_a_contradiction(tmp_path):
    """A benchmark line states its board's optimal length: a shorter answer, a proof of
    another length or a lower bound above it is a contradiction (exit 1, in --json), and
    only a proof or bound the line contradicts is withdrawn."""
    from solver.outcome import Outcome, stated_length_clash

    def o(**fields):
        return Outcome(0, "b", "solved", expected_length=9, **fields)

    agree = o(length=9, optimal=True, lower_bound=9)
    assert stated_length_clash(agree) is None and agree.contradiction is None
    shorter = o(length=3, optimal=True, lower_bound=3)
    assert "an answer of 3 moves" in stated_length_clash(shorter) and shorter.optimal
    above = o(length=13, lower_bound=11, optimal=False)
    assert "lower bound is 11" in stated_length_clash(above) and above.lower_bound is None
    longer = o(length=11, lower_bound=11, optimal=True, certificate={})
    assert "11 is proven" in stated_length_clash(longer) and not longer.optimal and longer.certificate is None
    r = run("solve", "--no-db", "1 99 1 2 0 3 4 5 6 7 8")  # id 1, stated 99: really 2 moves (Korf goal)
    assert (
        r.exit_code == 1
        and "error: contradiction on board" in r.output
        and "states an optimal length of 99" in r.output
    )
    r = run("solve", "--no-db", "--json", "1 2 1 2 0 3 4 5 6 7 8")
    assert r.exit_code == 0 and "contradiction" not in json.loads(r.stdout.splitlines()[0])
