"""Every reader of user input, on any text (hypothesis): board lines of each format,
files of boards with or without the move-limit line, answer files, move strings,
journals, and ``--budget``-, ``--time-limit``- and size-style values.  Each gives a value
or a one-line error (exit 2 from the CLI), never a traceback; a board's text reads back
as the same board; random legal move strings simulate as a naive model does."""

import json
import random
import tempfile
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from pdb_builder.board import BLANK, WALL, Board, Shape, label
from pdb_builder.errors import BoardError
from pdb_builder.formats import parse_board_text, read_lines
from pdb_builder.moves import check_moves
from solver.cli import main
from solver.run.answer_file import read_answer_file
from solver.run.journal import read_journal

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# text that looks like what these readers meet: board characters, digits, separators, and anything else
BOARD_CHARACTERS = st.sampled_from(list("0123456789ABCZ=,- \t#xLRUD\n"))
BOARDISH = st.text(alphabet=BOARD_CHARACTERS | st.characters(codec="utf-8"), max_size=60)


def _one_line_error(r, source: str | None = None) -> None:
    """A CLI result that failed as a user's mistake should: exit 2, no traceback, one line
    (or, for boards of ``source`` that cannot be read, a line each naming its line)."""
    assert r.exception is None or isinstance(r.exception, SystemExit), r.output
    assert "Traceback" not in r.output
    if r.exit_code == 2:
        said = r.output.strip().splitlines()
        assert len(said) == 1 or (source and all(f"{source}:" in line for line in said)), r.output


# -- boards ------------------------------------------------------------------------------------


@SETTINGS
@given(text=BOARDISH, goal=st.sampled_from(["korf", "devquiz"]), size=st.sampled_from([None, (3, 3), (4, 3)]))
def test_any_board_text_is_a_board_or_a_board_error(text, goal, size):
    try:
        fmt, board, _, _ = parse_board_text(text, size, goal)
    except BoardError as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    assert isinstance(board, Board) and fmt


@st.composite
def devquiz_boards(draw):
    """A DevQuiz board of any size 3-6 each way, any walls but on the bottom-right cell,
    tiles shuffled (solvable or not: reading does not decide that)."""
    w, h = draw(st.integers(3, 6)), draw(st.integers(3, 6))
    n = w * h
    walls = draw(st.sets(st.integers(0, n - 2), max_size=n // 3))
    free = [c for c in range(n) if c not in walls]
    labels = [label(c + 1) for c in free[:-1]] + ["0"]
    order = draw(st.permutations(labels))
    cells, it = [], iter(order)
    for c in range(n):
        cells.append("=" if c in walls else next(it))
    return f"{w},{h},{''.join(cells)}"


@SETTINGS
@given(text=devquiz_boards())
def test_a_devquiz_line_reads_back_as_the_same_board(text):
    _, board, _, _ = parse_board_text(text)
    assert str(board) == text
    _, again, _, _ = parse_board_text(str(board))
    assert again.cells == board.cells and again.shape == board.shape


@SETTINGS
@given(w=st.integers(2, 8), h=st.integers(2, 8), data=st.data())
def test_a_numeric_board_reads_back_as_the_same_board(w, h, data):
    assume(w * h <= 64)
    tiles = data.draw(st.permutations(list(range(w * h))))
    text = " ".join(map(str, tiles))
    _, board, _, _ = parse_board_text(text, (w, h), "korf")
    _, again, _, _ = parse_board_text(str(board), (w, h), "korf")
    assert again.cells == board.cells and again.shape == board.shape


@SETTINGS
@given(
    limits=st.one_of(
        st.tuples(*[st.integers(-5, 10**6)] * 4).map(lambda t: " ".join(map(str, t))),
        BOARDISH,
    ),
    count=st.one_of(st.integers(-2, 5).map(str), BOARDISH),
    lines=st.lists(st.one_of(devquiz_boards(), BOARDISH), max_size=4),
)
@example(limits="0 0 0 0", count="\u00b2", lines=[])  # a digit that is no decimal: int() refuses it
def test_any_file_of_boards_with_or_without_its_move_limits_reads_or_says_one_line(limits, count, lines):
    """A file's first lines as a DevQuiz problem file has them (the L R U D limits, the
    count), or anything, then boards or anything: records (each with its board or its
    error), or one BoardError naming the line."""
    text = [limits, count, *lines]
    try:
        out = read_lines(text, "f.txt")
    except BoardError as exc:
        assert str(exc).startswith("f.txt:") and "\n" not in str(exc)
        return
    for rec in out.records:
        assert (rec.board is None) != (rec.error is None)
    if out.limits is not None:
        assert len(out.limits) == 4 and all(isinstance(x, int) for x in out.limits)


@SETTINGS
@given(body=st.binary(max_size=200) | BOARDISH.map(str.encode))
def test_check_on_any_file_exits_with_a_code_and_at_most_one_line_of_error(body):
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "boards.txt"
        f.write_bytes(body)
        r = CliRunner().invoke(main, ["check", str(f)])
    _one_line_error(r, "boards.txt")
    assert r.exit_code in (0, 2, 3)


# -- answer files and move strings -------------------------------------------------------------


def _records(n: int = 3):
    from .test_inspect import walk

    lines = [walk(Shape.devquiz(3, 3, [4] if k % 2 else []), steps=30, seed=k) for k in range(n)]
    return read_lines(lines, "b.txt").records, lines


@SETTINGS
@given(body=st.binary(max_size=120) | st.lists(BOARDISH, max_size=5).map(lambda x: "\n".join(x).encode()))
def test_any_answer_file_reads_or_says_one_line(body):
    records, lines = _records()
    with tempfile.TemporaryDirectory() as d:
        f, boards = Path(d) / "a.txt", Path(d) / "b.txt"
        f.write_bytes(body)
        boards.write_text("\n".join(lines) + "\n")
        try:
            got = read_answer_file(f, records)
            assert len(got) == len(records)
        except BoardError as exc:
            assert "\n" not in str(exc)
        r = CliRunner().invoke(main, ["check", str(boards), str(f)])
    _one_line_error(r)
    assert r.exit_code in (0, 2, 5)


@SETTINGS
@given(moves=st.text(max_size=40) | st.text(alphabet="LRUD", max_size=40))
def test_any_move_string_simulates_or_names_its_first_bad_move(moves):
    records, _ = _records(1)
    mc = check_moves(records[0].board, moves)
    assert mc.ok == (mc.legal and tuple(mc.final) == records[0].board.shape.goal)
    if not mc.legal:
        assert mc.index is not None and f"move {mc.index + 1} " in mc.reason


def _naive_walk(board: Board, rng: random.Random, steps: int) -> tuple[str, tuple]:
    """A random legal move string and where it leaves the tiles, by a plain model: the
    blank swaps with the cell one step in the move's direction, inside the board and not
    a wall."""
    w, h = board.shape.width, board.shape.height
    cells, moves = list(board.cells), []
    step = {"L": (-1, 0), "R": (1, 0), "U": (0, -1), "D": (0, 1)}
    for _ in range(steps):
        b = cells.index(BLANK)
        x, y = b % w, b // w
        legal = [
            (m, (y + dy) * w + x + dx)
            for m, (dx, dy) in step.items()
            if 0 <= x + dx < w and 0 <= y + dy < h and cells[(y + dy) * w + x + dx] != WALL
        ]
        m, t = rng.choice(legal)
        cells[b], cells[t] = cells[t], BLANK
        moves.append(m)
    return "".join(moves), tuple(cells)


@SETTINGS
@given(text=devquiz_boards(), seed=st.integers(0, 2**32), steps=st.integers(0, 80))
def test_random_legal_move_strings_simulate_as_a_naive_model_does(text, seed, steps):
    _, board, _, _ = parse_board_text(text)
    b = board.cells.index(BLANK)
    w = board.shape.width
    assume(any(board.cells[c] != WALL for c in board.shape.neighbours[b]) or steps == 0)
    assert w  # (a board of any size)
    moves, final = _naive_walk(board, random.Random(seed), steps)
    mc = check_moves(board, moves)
    assert mc.legal and tuple(mc.final) == final
    assert mc.ok == (final == board.shape.goal)


# -- journals ----------------------------------------------------------------------------------

JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 40) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
KEYS = st.sampled_from(
    ["index", "board", "status", "moves", "length", "optimal", "lower_bound", "h0", "certificate", "tables",
     "heuristic", "step", "ended", "iterations", "unfinished", "ladder_failed", "goal", "size", "input"]
)  # fmt: skip


@SETTINGS
@given(lines=st.lists(st.one_of(st.dictionaries(KEYS, JSONISH, max_size=8).map(json.dumps), BOARDISH), max_size=6))
def test_any_journal_reads_as_outcomes_or_skips_its_lines(lines):
    """A journal of any lines (JSON of the fields a line has, with values of any type, or
    text): read, resumed and reported without an error; what is read back is an answer
    that simulates to its board's goal."""
    records, _ = _records(2)
    with tempfile.TemporaryDirectory() as d:
        j = Path(d) / "a.txt.progress.jsonl"
        j.write_text("\n".join(lines) + "\n", encoding="utf-8")
        done = read_journal(j, records)
    for i, out in done.items():
        if out.status == "solved":
            assert check_moves(records[i - 1].board, out.moves or "").ok


@pytest.fixture(scope="module")
def real_line():
    """Board 1's journal line as a search writes it."""
    from solver.api import SolverPool, solve_record

    records, _ = _records(2)
    return solve_record(records[0], SolverPool(use_db=False)).as_json()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(changes=st.dictionaries(KEYS, JSONISH, min_size=1, max_size=4))
def test_a_real_journal_line_with_any_field_changed_is_read_or_skipped(real_line, changes):
    """A line of the board's own (so that it is read as that board's), with fields given
    values of any type: an outcome whose answer simulates and whose proof is backed, or
    nothing."""
    records, _ = _records(2)
    with tempfile.TemporaryDirectory() as d:
        j = Path(d) / "a.txt.progress.jsonl"
        j.write_text(json.dumps({**real_line, **changes}) + "\n", encoding="utf-8")
        done = read_journal(j, records)
    for out in done.values():
        if out.status == "solved":
            assert check_moves(records[0].board, out.moves or "").ok
        if out.optimal:
            assert out.certificate["length"] == out.length == len(out.moves)


@pytest.fixture(scope="module")
def resumable(tmp_path_factory):
    d = tmp_path_factory.mktemp("resume")
    _, lines = _records(2)
    (d / "b.txt").write_text("\n".join(lines) + "\n")
    return d


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.dictionaries(KEYS, JSONISH, max_size=8).map(json.dumps), max_size=4))
def test_resume_from_any_journal_answers_every_board_or_says_one_line(resumable, lines):
    out = resumable / "a.txt"
    for p in resumable.glob("a.txt*"):
        p.unlink()
    Path(f"{out}.progress.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    r = CliRunner().invoke(
        main, ["solve", str(resumable / "b.txt"), "--out", str(out), "--no-db", "--resume", "--workers", "1"]
    )
    _one_line_error(r)
    assert r.exit_code in (0, 2)
    if r.exit_code == 0:
        records, _ = _records(2)
        answers = out.read_text().splitlines()
        assert all(check_moves(rec.board, m).ok for rec, m in zip(records, answers))


# -- option values -----------------------------------------------------------------------------


@SETTINGS
@given(text=st.text(max_size=12) | st.from_regex(r"-?[0-9.e]{0,6}[smhx]?", fullmatch=True))
def test_any_duration_is_seconds_or_a_bad_parameter(text):
    from solver.cli.options import Seconds

    for kind in (Seconds(units=True, words={"auto": "auto", "none": None}), Seconds()):
        try:
            v = kind.convert(text, None, None)
        except click.BadParameter as exc:
            assert "\n" not in exc.format_message()
            continue
        assert v in ("auto", None) or (isinstance(v, float) and 0 < v < float("inf"))


@SETTINGS
@given(text=st.text(max_size=12) | st.from_regex(r"-?[0-9.]{0,6} ?[kKmMgGtT]?i?[bB]?", fullmatch=True))
def test_any_size_in_bytes_is_bytes_or_a_bad_parameter(text):
    from pdb_builder.cli.shared import parse_bytes

    try:
        v = parse_bytes(text)
    except click.BadParameter as exc:
        assert "\n" not in exc.format_message()
        return
    assert isinstance(v, int) and v > 0


@SETTINGS
@given(budget=st.text(max_size=10))
def test_run_with_any_budget_text_runs_or_exits_2_in_one_line(budget):
    """Only text the budget's type refuses reaches the CLI here (a valid one would start a run)."""
    from solver.cli.options import Seconds

    try:
        Seconds(units=True, words={"auto": "auto", "none": None}).convert(budget, None, None)
        assume(False)
    except click.BadParameter:
        pass
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "b.txt"
        f.write_text("3,3,123456708\n")
        r = CliRunner().invoke(main, ["run", str(f), "--out", str(Path(d) / "a.txt"), "--budget", budget])
    assert r.exit_code == 2 and "--budget" in r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)


def test_a_file_of_numeric_boards_takes_its_size_as_a_pair_or_as_its_text():
    lines = ["1 2 3 0 4 5", "1 2 3 4 0 5"]
    as_pair = read_lines(lines, "b.txt", size=(3, 2)).records
    as_text = read_lines(lines, "b.txt", size="3x2").records
    assert [r.board for r in as_text] == [r.board for r in as_pair] and all(r.board for r in as_text)
    with pytest.raises(BoardError, match="expected WxH"):
        read_lines(lines, "b.txt", size="3y2")
